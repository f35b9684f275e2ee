/** The auth service's operations; each checks who may call it. */
import { AppError, requireService, tenantOf, type AuthContext } from '@mailroom/contracts';
import type { RpcHandlers } from '@mailroom/messaging';
import type { AccessTokens } from '../domain/access-tokens';
import type { Accounts } from '../domain/accounts';
import type { ApiKeys } from '../domain/api-keys';
import type { Sessions } from '../domain/sessions';
import type { UserOrganizations } from '../domain/user-organizations';
import { clientInfo } from './client-info';
import type { EmailVerification } from '../domain/email-verification';
import type { PasswordChange } from '../domain/password-change';
import type { PasswordReset } from '../domain/password-reset';
import type { OAuthLinks } from '../domain/oauth-links';
import type { OAuthSignIn } from '../domain/oauth-sign-in';
import type { AccountDeletion } from '../domain/account-deletion';
import type { AccountRecovery } from '../domain/account-recovery';
import type { EmailChange } from '../domain/email-change';
import type { Mfa } from '../domain/mfa';
import type { MfaLogin } from '../domain/mfa-login';
import type { SsoConfigs } from '../domain/sso-configs';
import type { SsoSignIn } from '../domain/sso-sign-in';
import type { UserSuspensions } from '../domain/user-suspensions';
import type { AuthExport } from '../domain/export';

function userOf(auth: AuthContext): Extract<AuthContext, { kind: 'user' }> {
  if (auth.kind !== 'user') throw new AppError('forbidden', 'this operation needs a user access token, not an API key');
  return auth;
}

export interface AuthDomain {
  accounts: Accounts;
  sessions: Sessions;
  organizations: UserOrganizations;
  apiKeys: ApiKeys;
  tokens: AccessTokens;
  /** Verification and passwords (domain/email-verification.ts, password-reset.ts, password-change.ts). */
  verification: EmailVerification;
  reset: PasswordReset;
  change: PasswordChange;
  /** Outside providers (domain/oauth-sign-in.ts, oauth-links.ts). */
  oauth: OAuthSignIn;
  oauthLinks: OAuthLinks;
  /** Email change, account deletion and recovery (domain/email-change.ts, account-deletion.ts, account-recovery.ts). */
  emailChange: EmailChange;
  deletion: AccountDeletion;
  recovery: AccountRecovery;
  /** The second factor and the login step that needs it (domain/mfa.ts, mfa-login.ts). */
  mfa: Mfa;
  mfaLogin: MfaLogin;
  /** Single sign-on: an organization's configurations and the login (domain/sso-configs.ts, sso-sign-in.ts). */
  ssoConfigs: SsoConfigs;
  sso: SsoSignIn;
  suspensions: UserSuspensions;
  /** The organization's rows for its export (the admin service asks; services only). */
  exportRows: AuthExport;
}

export function authHandlers(domain: AuthDomain): RpcHandlers<'auth'> {
  const { accounts, sessions, organizations, apiKeys, tokens, verification, reset, change, oauth, oauthLinks, emailChange, deletion, recovery, mfa, mfaLogin, ssoConfigs, sso, suspensions, exportRows } = domain;
  return {
    'auth.user.signup': (req, { client }) => accounts.signup(req, clientInfo(client)),
    'auth.user.login': (req, { client }) => accounts.login(req, clientInfo(client)),
    'auth.user.me': async (_req, { auth }) => accounts.me(userOf(auth).user_id),
    'auth.user.update': async (req, { auth }) => accounts.updateProfile(userOf(auth).user_id, req),
    'auth.user.organizations': async (req, { auth }) => organizations.list(userOf(auth), req),
    'auth.token.refresh': (req, { client }) => accounts.refresh(req.refresh_token, clientInfo(client)),
    'auth.session.switchOrg': async (req, { auth, client }) => accounts.switchOrg(userOf(auth), req.org_id, clientInfo(client)),
    'auth.session.logout': async (_req, { auth }) => {
      await accounts.logout(userOf(auth).session_id);
      return {};
    },
    'auth.session.list': async (req, { auth }) => sessions.list(userOf(auth), req),
    'auth.session.revoke': async (req, { auth }) => {
      await sessions.revoke(userOf(auth), req.sessionId);
      return {};
    },
    'auth.session.revokeAll': async (_req, { auth }) => sessions.revokeOthers(userOf(auth)),
    'auth.email.verify': (req) => verification.verify(req),
    'auth.email.resend': async (_req, { auth }) => {
      await verification.resend(userOf(auth).user_id);
      return {};
    },
    // The same answer for every address, given before the address is looked up.
    'auth.password.resetRequest': async (req) => {
      reset.request(req.email);
      return {};
    },
    'auth.password.reset': async (req) => {
      await reset.reset(req);
      return {};
    },
    'auth.password.change': async (req, { auth }) => {
      await change.change(userOf(auth), req);
      return {};
    },
    'auth.oauth.start': (req) => oauth.begin(req.provider, req.browser_binding),
    'auth.oauth.callback': (req, { client }) => oauth.complete(req.provider, req, clientInfo(client)),
    'auth.oauth.linkStart': async (req, { auth }) => oauth.beginLink(userOf(auth).user_id, req.provider),
    'auth.oauth.linkCallback': async (req, { auth }) => oauth.completeLink(userOf(auth).user_id, req.provider, req),
    'auth.oauth.list': async (_req, { auth }) => oauthLinks.list(userOf(auth).user_id),
    'auth.oauth.unlink': async (req, { auth }) => {
      await oauthLinks.unlink(userOf(auth).user_id, req.provider);
      return {};
    },
    'auth.jwks.get': async () => {
      const { keys } = await tokens.jwks();
      return { keys: keys.map((k) => ({ ...k, kty: String(k.kty), kid: String(k.kid), alg: String(k.alg) })) };
    },
    'auth.apikey.create': (req, { auth, requestId, client }) => apiKeys.create(tenantOf(auth), req, { requestId, client }),
    'auth.apikey.list': (req, { auth }) => apiKeys.list(tenantOf(auth), req),
    'auth.apikey.get': (req, { auth }) => apiKeys.get(tenantOf(auth), req.id),
    'auth.apikey.delete': async (req, { auth, requestId, client }) => {
      await apiKeys.revoke(tenantOf(auth), req.id, { requestId, client });
      return {};
    },
    'auth.user.profiles': async (req, { auth }) => {
      requireService(auth);
      return { data: await accounts.profiles(req.user_ids) };
    },
    'auth.apikey.countInEnvironment': async (req, { auth }) => {
      requireService(auth);
      return apiKeys.count(req);
    },
    'auth.apikey.verify': async (req, { auth }) => {
      requireService(auth);
      return apiKeys.verify(req.key);
    },
    'auth.user.delete': async (req, { auth }) => deletion.delete(userOf(auth), req),
    // No credential: a deleted account has no session; the token of its login proves it.
    'auth.user.recover': (req, { client }) => recovery.recover(req.recovery_token, clientInfo(client)),
    'auth.user.changeEmail': async (req, { auth }) => {
      await emailChange.request(userOf(auth), req);
      return {};
    },
    'auth.user.confirmEmailChange': async (req, { auth }) => emailChange.confirm(userOf(auth), req),
    'auth.mfa.status': async (_req, { auth }) => mfa.status(userOf(auth).user_id),
    'auth.mfa.enrol': async (_req, { auth }) => mfa.enrol(userOf(auth).user_id),
    'auth.mfa.confirm': async (req, { auth }) => mfa.confirm(userOf(auth).user_id, req.code),
    'auth.mfa.remove': async (req, { auth }) => {
      await mfa.remove(userOf(auth).user_id, req);
      return {};
    },
    'auth.mfa.regenerateRecoveryCodes': async (req, { auth }) => mfa.regenerateRecoveryCodes(userOf(auth).user_id, req.code),
    'auth.mfa.verifyLogin': (req, { client }) => mfaLogin.verifyLogin(req, clientInfo(client)),
    'auth.sso.create': (req, { auth, requestId, client }) => ssoConfigs.create(auth, req, { requestId, client }),
    'auth.sso.list': (_req, { auth }) => ssoConfigs.list(auth),
    'auth.sso.update': (req, { auth, requestId, client }) => {
      const { configId, ...changes } = req;
      return ssoConfigs.update(auth, configId, changes, { requestId, client });
    },
    'auth.sso.delete': async (req, { auth, requestId, client }) => {
      await ssoConfigs.remove(auth, req.configId, { requestId, client });
      return {};
    },
    'auth.sso.test': (req, { auth }) => ssoConfigs.test(auth, req.configId),
    'auth.sso.activate': (req, { auth, requestId, client }) => ssoConfigs.activate(auth, req.configId, { requestId, client }),
    'auth.sso.start': (req) => sso.begin(req.org_identifier, req.browser_binding),
    'auth.sso.oidcCallback': (req, { client }) => sso.complete(req, clientInfo(client)),
    'auth.sso.samlCallback': (req, { client }) => sso.completeSaml(req, clientInfo(client)),
    'auth.sso.samlMetadata': (req) => sso.samlMetadata(req.org_id),
    // The platform's operators (admin keys only; the domain checks).
    'auth.adminUser.search': (req, ctx) => suspensions.search(ctx, req),
    'auth.adminUser.get': (req, ctx) => suspensions.get(ctx, req.id),
    'auth.adminUser.suspend': (req, ctx) => suspensions.suspend(ctx, req.id, req.reason),
    'auth.adminUser.unsuspend': (req, ctx) => suspensions.unsuspend(ctx, req.id),
    'auth.export.page': async (req, { auth }) => {
      requireService(auth);
      return exportRows.page(req);
    },
  };
}
