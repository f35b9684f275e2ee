/**
 * The auth service: users, sessions, access tokens and their keys, API keys, email
 * verification and passwords, the second factor (MFA) and new-sign-in notices.
 *
 * The composition root: configuration, repositories, clients, domain and handlers are wired
 * in `start` below. `node services/auth/dist/main.js` runs it alone (libs/runtime gives it its
 * logger, database, bus, lifecycle, health and telemetry); the all-in-one runs it beside the others.
 */
import path from 'node:path';
import { transactor } from '@mailroom/db';
import { RpcClient, serveRpc } from '@mailroom/messaging';
import { IpPolicy, SecretBox } from '@mailroom/platform';
import { DeletedEnvironments, Outbox, runService, type ServiceModule } from '@mailroom/runtime';
import { accountOutbox } from './clients/account-outbox.client';
import { failureLimiter } from './clients/failure-limiter.client';
import { oauthProviders } from './clients/oauth-providers.client';
import { orgsClient } from './clients/orgs.client';
import { revocationsClient } from './clients/revocations.client';
import { startEnvironmentDeletedConsumer } from './consumers/environment-deleted.consumer';
import { orgsDepartureClient } from './clients/orgs-departure.client';
import { AccountDeletion } from './domain/account-deletion';
import { AccountPurge } from './domain/account-purge';
import { AccountRecovery } from './domain/account-recovery';
import { EmailChange } from './domain/email-change';
import { IdentityProof } from './domain/identity-proof';
import { AccountPurgeJob } from './jobs/account-purge.job';
import { DeletedAccountRepository } from './repo/deleted-account.repository';
import { attemptPolicy, loadConfig, type AuthConfig } from './config';
import { AccessTokens } from './domain/access-tokens';
import { Accounts } from './domain/accounts';
import { ApiKeys } from './domain/api-keys';
import { AttemptGuard, IdentifierHasher } from './domain/attempt-guard';
import { EmailVerification } from './domain/email-verification';
import { LockoutNotices } from './domain/lockout-notices';
import { CodeHasher, OneTimeCodes } from './domain/one-time-codes';
import { CHANGE_FAILURES, PasswordChange } from './domain/password-change';
import { PasswordReset } from './domain/password-reset';
import { Mfa, MFA_FAILURES } from './domain/mfa';
import { MfaLogin } from './domain/mfa-login';
import { SignInNotices } from './domain/sign-in-notice';
import { Passwords } from './domain/passwords';
import { SessionStart } from './domain/session-start';
import { Sessions } from './domain/sessions';
import { UserOrganizations } from './domain/user-organizations';
import { OAuthAttempts } from './domain/oauth-attempts';
import { OAuthLinks } from './domain/oauth-links';
import { OAuthSignIn } from './domain/oauth-sign-in';
import { ApiKeyRepository } from './repo/api-key.repository';
import { AuthExport } from './domain/export';
import { AuthExportRepository } from './repo/export.repository';
import { AttemptRepository } from './repo/attempt.repository';
import { CredentialRepository } from './repo/credential.repository';
import { OAuthRepository } from './repo/oauth.repository';
import { OneTimeCodeRepository } from './repo/one-time-code.repository';
import { SigningKeyRepository } from './repo/signing-key.repository';
import type { AuthDb } from './repo/tables';
import { UserRepository } from './repo/user.repository';
import { MfaRepository } from './repo/mfa.repository';
import { MfaChallengeRepository } from './repo/mfa-challenge.repository';
import { SessionHistoryRepository } from './repo/session-history.repository';
import { authHandlers } from './rpc/handlers';
import { guardedFetch } from './clients/sso-http';
import { SsoOidcClient } from './clients/sso-oidc.client';
import { SsoSamlClient } from './clients/sso-saml.client';
import { ssoMembersClient } from './clients/sso-members.client';
import { ssoDomainsClient } from './clients/sso-domains.client';
import { SsoAttempts } from './domain/sso-attempts';
import { SsoConfigs } from './domain/sso-configs';
import { SsoSignIn } from './domain/sso-sign-in';
import { SsoRepository } from './repo/sso.repository';
import { UserSuspensionRepository } from './repo/user-suspension.repository';
import { UserSuspensions } from './domain/user-suspensions';

export const authService: ServiceModule<AuthConfig, AuthDb> = {
  name: 'auth',
  database: { schema: 'auth', migrationsDir: path.join(__dirname, '..', 'migrations') },
  loadConfig,
  async start({ config, bus, db, life, clock, log }) {
    const rpc = new RpcClient(bus);
    const transact = transactor(db);
    const orgs = orgsClient(rpc);
    const tokens = new AccessTokens(transact, new SigningKeyRepository(db), new SecretBox(config.SECRETS_ENCRYPTION_KEY), clock, {
      issuer: config.AUTH_ISSUER,
      audience: config.AUTH_AUDIENCE,
      ttlSeconds: config.ACCESS_TOKEN_TTL_SECONDS,
    });
    await tokens.init();
    const revocations = revocationsClient(bus, log);
    const outbox = life.add('auth:outbox', new Outbox(db, bus, log, { service: 'auth' }), (o) => o.stop());
    outbox.start();
    const users = new UserRepository(db);
    const passwords = new Passwords();
    await passwords.prepare();
    const credentialRepo = new CredentialRepository(db);
    const account = accountOutbox(outbox);
    const codes = new OneTimeCodes(new OneTimeCodeRepository(db), new CodeHasher(config.SECRETS_ENCRYPTION_KEY), config.APP_URL, clock);
    const lockouts = life.add('auth:lockout-notices', new LockoutNotices(transact, users, account, {
      onError: (err) => log.error({ err }, 'lock-out notice failed; no mail was sent'),
      onDropped: () => log.warn('lock-out notice dropped: too many are waiting'),
    }), (n) => n.settled());
    const guard = new AttemptGuard(transact, new AttemptRepository(db), new IdentifierHasher(config.SECRETS_ENCRYPTION_KEY), clock, attemptPolicy(config), lockouts);
    const prune = setInterval(() => void guard.prune().catch((err: unknown) => log.warn({ err }, 'could not prune the brute-force guard')), 10 * 60_000);
    life.add('auth:attempt-prune', prune.unref(), (t) => clearInterval(t));
    const verification = new EmailVerification(transact, users, credentialRepo, codes, account, clock, guard);
    const notices = new SignInNotices(new SessionHistoryRepository(db), account);
    const ssoRepo = new SsoRepository(db);
    const deletedAccounts = new DeletedAccountRepository(db);
    const apiKeyRepo = new ApiKeyRepository(db);
    const ttl = { accessTokenTtlSeconds: config.ACCESS_TOKEN_TTL_SECONDS };
    const suspensions = new UserSuspensions({
      transact,
      accounts: deletedAccounts,
      suspensions: new UserSuspensionRepository(db),
      credentials: credentialRepo,
      keys: apiKeyRepo,
      orgs,
      outbox: account,
      revocations,
      clock,
      ...ttl,
    });
    const start = new SessionStart(transact, users, tokens, orgs, clock, { refreshTokenTtlSeconds: config.REFRESH_TOKEN_TTL_SECONDS }, notices, ssoRepo, suspensions);
    const recovery = new AccountRecovery(transact, deletedAccounts, start, account, clock);
    const deletedSignIn = { findByEmail: (email: string) => deletedAccounts.findByEmail(email), refuseSignIn: recovery.refuseSignIn.bind(recovery) };
    const mfaRepo = new MfaRepository(db);
    const mfa = new Mfa(transact, users, mfaRepo, new SecretBox(config.SECRETS_ENCRYPTION_KEY), passwords, failureLimiter(MFA_FAILURES), account, clock, { issuer: config.MFA_TOTP_ISSUER });
    const mfaLogin = new MfaLogin(new MfaChallengeRepository(db), deletedAccounts, mfa, start, clock, guard, transact, recovery);
    const accounts = new Accounts(transact, users, passwords, tokens, orgs, revocations, clock, start, verification, deletedSignIn, mfaLogin, guard);
    const sessions = new Sessions(transact, users, revocations, clock, { accessTokenTtlSeconds: config.ACCESS_TOKEN_TTL_SECONDS });
    const organizations = new UserOrganizations(orgs);
    const apiKeys = new ApiKeys(transact, apiKeyRepo, new DeletedEnvironments<AuthDb>(), orgs, revocations, clock, account);
    const reset = new PasswordReset(transact, users, credentialRepo, passwords, codes, account, clock, {
      ...ttl,
      onError: (err) => log.error({ err }, 'password reset request failed; no mail was sent'),
      onDropped: () => log.warn('password reset request dropped: too many are waiting'),
    }, guard);
    // Stopped after the operations (below), before the outbox: requests already answered are worked on.
    life.add('auth:reset-requests', reset, (r) => r.settled());
    // Wrong passwords asked again (change-password, change-email, deletion) count together.
    const passwordFailures = failureLimiter(CHANGE_FAILURES);
    const change = new PasswordChange(transact, users, credentialRepo, passwords, passwordFailures, account, clock, ttl);
    const providers = oauthProviders(config.OAUTH_PROVIDERS, { appUrl: config.APP_URL, timeoutMs: config.OAUTH_TIMEOUT_MS, log });
    const oauthRepo = new OAuthRepository(db);
    const attempts = new OAuthAttempts(oauthRepo, new SecretBox(config.SECRETS_ENCRYPTION_KEY), clock);
    const oauth = new OAuthSignIn({
      transact,
      providers,
      attempts,
      identities: oauthRepo,
      users,
      accounts,
      start,
      secondFactor: mfaLogin,
      mfa: mfaRepo,
      deletedAccounts,
      deleted: recovery,
      apiKeys: apiKeyRepo,
      revocations,
      credentials: credentialRepo,
      outbox: account,
      clock,
      ...ttl,
    });
    const oauthLinks = new OAuthLinks(transact, oauthRepo, (name) => providers.has(name));
    // Email change; deletion, recovery (above, for login) and the purge.
    const proof = new IdentityProof(passwords, passwordFailures, clock);
    const departures = orgsDepartureClient(rpc);
    const emailChange = new EmailChange(transact, users, deletedAccounts, credentialRepo, codes, proof, account, clock, ttl);
    const deletion = new AccountDeletion(transact, users, deletedAccounts, credentialRepo, apiKeyRepo, proof, departures, account, revocations, clock, ttl);
    const purge = new AccountPurge(transact, deletedAccounts, apiKeyRepo, departures, revocations, clock, (err, userId) => log.warn({ err, user_id: userId }, 'could not purge a deleted account; the next run tries again'));
    // Single sign-on: configurations and the OIDC login; providers are called through the SSRF guard.
    const ssoSealer = new SecretBox(config.SECRETS_ENCRYPTION_KEY);
    const ssoFetch = guardedFetch(new IpPolicy(config.ssoAllowedCidrs), config.OAUTH_TIMEOUT_MS);
    const ssoProvider = new SsoOidcClient(ssoFetch, config.SSO_REDIRECT_URI);
    const samlClient = new SsoSamlClient(ssoFetch, config.samlSpKeyPair);
    const samlBase = config.SSO_SAML_BASE_URL.replace(/\/+$/, '');
    const samlSp = { entityId: (orgId: string) => `${samlBase}/api/v1/auth/sso/saml/metadata/${orgId}`, acsUrl: `${samlBase}/api/v1/auth/sso/saml/callback` };
    const ssoDomains = ssoDomainsClient(rpc);
    const ssoConfigs = new SsoConfigs(transact, ssoRepo, ssoProvider, ssoSealer, clock, { allowHttp: config.MAILROOM_ENV !== 'production' }, ssoDomains, samlClient, samlSp, account);
    const sso = new SsoSignIn({ transact, repo: ssoRepo, attempts: new SsoAttempts(ssoRepo, ssoSealer, clock), provider: ssoProvider, sealer: ssoSealer, users, members: ssoMembersClient(rpc), domains: ssoDomains, start, clock, saml: samlClient, sp: samlSp, samlSkewMs: config.SSO_SAML_CLOCK_SKEW_SECONDS * 1000, samlMetadataMaxAgeMs: config.SSO_SAML_METADATA_REFRESH_SECONDS * 1000, allowHttp: config.MAILROOM_ENV !== 'production' });
    const handlers = authHandlers({ accounts, sessions, organizations, apiKeys, tokens, verification, reset, change, oauth, oauthLinks, emailChange, deletion, recovery, mfa, mfaLogin, ssoConfigs, sso, suspensions, exportRows: new AuthExport(new AuthExportRepository(db)) });
    life.add('auth:rpc', serveRpc(bus, 'auth', handlers), (s) => s.stop());
    const purgeJob = life.add('auth:account-purge', new AccountPurgeJob(purge, clock, config.ACCOUNT_PURGE_INTERVAL_SECONDS * 1000, log), (j) => j.stop());
    purgeJob.start();
    life.add('auth:environment-deleted', await startEnvironmentDeletedConsumer(bus, apiKeys), (c) => c.stop());
  },
};

if (require.main === module) void runService(authService, process.env);
