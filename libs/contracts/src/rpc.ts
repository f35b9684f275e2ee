/**
 * The RPC catalog: operation name -> request and response schemas. The subject is
 * `rpc.<operation>` and the first segment of the operation names the serving service.
 * A service serves exactly its own operations; a missing handler fails to compile.
 */
import { z } from 'zod';
import * as a from './api/accounts';
import * as v from './api/verification';
import * as oa from './api/oauth';
import * as life from './api/account-lifecycle';
import * as mfa from './api/mfa';
import * as m from './api/mailbox';
import * as mem from './api/members';
import * as env from './api/environments';
import * as own from './api/ownership';
import * as snd from './api/send';
import * as u from './api/usage';
import * as upg from './api/upgrade-requests';
import * as w from './api/webhooks';
import * as dom from './api/domains';
import * as met from './api/metrics';
import * as adm from './api/admin';
import * as sso from './api/sso';
import * as aud from './api/audit';
import * as exp from './api/exports';
import * as hl from './api/health';
import { idSchema } from './ids';
import { pageOf } from './pagination';
import { roleSchema } from './permissions';

const empty = z.object({});

export const RPC = {
  // auth
  'auth.user.signup': { request: a.signupRequest, response: a.sessionResponse },
  'auth.user.login': { request: a.loginRequest, response: mfa.loginResponse },
  'auth.user.me': { request: empty, response: a.user },
  'auth.token.refresh': { request: a.refreshRequest, response: a.sessionResponse },
  'auth.session.logout': { request: empty, response: empty },
  'auth.user.update': { request: a.userUpdateRequest, response: a.user },
  'auth.user.organizations': { request: a.pageQuery, response: a.userOrganizationList },
  'auth.session.list': { request: a.pageQuery, response: a.sessionList },
  'auth.session.revoke': { request: a.sessionParam, response: empty },
  'auth.session.revokeAll': { request: empty, response: a.sessionsRevoked },
  'auth.session.switchOrg': { request: a.switchOrgRequest, response: a.sessionResponse },
  'auth.jwks.get': { request: empty, response: a.jwks },
  'auth.apikey.create': { request: a.apiKeyCreateRequest, response: a.apiKeyCreated },
  'auth.apikey.list': { request: a.pageQuery, response: a.apiKeyList },
  'auth.apikey.get': { request: a.idParam('apiKey'), response: a.apiKey },
  'auth.apikey.delete': { request: a.idParam('apiKey'), response: empty },
  'auth.apikey.verify': { request: z.object({ key: z.string().min(1).max(256) }), response: a.apiKeyVerification },
  // auth: email verification and passwords
  'auth.email.verify': { request: v.verifyEmailRequest, response: a.user },
  'auth.email.resend': { request: empty, response: v.mailQueued },
  'auth.password.resetRequest': { request: v.passwordResetRequest, response: v.mailQueued },
  'auth.password.reset': { request: v.passwordResetBody, response: empty },
  'auth.password.change': { request: v.passwordChangeBody, response: empty },
  // auth: signing in with an outside provider, and the providers linked to an account
  'auth.oauth.start': { request: oa.oauthProviderParam.extend(oa.browserBound.shape), response: oa.oauthAuthorization },
  'auth.oauth.callback': { request: oa.oauthProviderParam.extend(oa.oauthCallbackBody.shape).extend(oa.browserBound.shape), response: mfa.loginResponse },
  'auth.oauth.linkStart': { request: oa.oauthProviderParam, response: oa.oauthAuthorization },
  'auth.oauth.linkCallback': { request: oa.oauthProviderParam.extend(oa.oauthCallbackBody.shape), response: oa.oauthLink },
  'auth.oauth.list': { request: empty, response: oa.oauthLinkList },
  'auth.oauth.unlink': { request: oa.oauthProviderParam, response: empty },
  /** Names and emails of people, for lists of members (services only; unknown ids are left out). */
  'auth.user.profiles': {
    request: z.object({ user_ids: z.array(idSchema('user')).max(mem.USER_PROFILES_MAX) }),
    response: z.object({ data: z.array(mem.userProfile) }),
  },
  // orgs
  'orgs.organization.createForOwner': {
    request: z.object({ owner_user_id: idSchema('user'), name: z.string().min(1).max(200) }),
    response: z.object({ organization: a.organization, environment: a.environment }),
  },
  'orgs.organization.get': {
    // Tenants read their own organization (org_id omitted); services name the one they need.
    request: z.object({ org_id: idSchema('organization').optional() }),
    response: a.organization,
  },
  'orgs.organization.update': { request: a.organizationUpdateRequest, response: a.organization },
  'orgs.membership.listForUser': {
    request: z.object({ user_id: idSchema('user') }),
    response: z.object({ data: z.array(a.membership) }),
  },
  'orgs.member.list': { request: a.pageQuery, response: mem.memberList },
  'orgs.member.get': { request: mem.memberId, response: mem.member },
  'orgs.member.update': { request: mem.memberId.extend(mem.memberUpdateBody.shape), response: mem.member },
  'orgs.member.remove': { request: mem.memberId, response: empty },
  'orgs.member.leave': { request: empty, response: empty },
  'orgs.environment.get': {
    request: z.object({ org_id: idSchema('organization'), env_id: idSchema('environment') }),
    response: a.environment,
  },
  // mailbox
  'mailbox.inbox.create': { request: m.inboxCreateRequest, response: m.inbox },
  'mailbox.inbox.list': { request: a.pageQuery, response: pageOf(m.inbox) },
  'mailbox.inbox.get': { request: m.inboxId, response: m.inbox },
  'mailbox.inbox.update': { request: m.inboxUpdateRequest.extend(m.inboxId.shape), response: m.inbox },
  'mailbox.inbox.delete': { request: m.inboxId, response: empty },
  'mailbox.inbox.resume': { request: m.inboxId, response: m.inbox },
  'mailbox.inbox.resolve': { request: z.object({ address: z.string().min(3).max(320) }), response: m.inboxResolution },
  'mailbox.message.get': { request: m.messageRef, response: m.message },
  'mailbox.message.list': { request: m.messageListRequest, response: m.messageList },
  'mailbox.message.raw': { request: m.messageRef, response: m.download },
  'mailbox.attachment.get': { request: m.messageRef.extend({ attachment_id: idSchema('attachment') }), response: m.download },
  // A signed download link (issue 31): the caller's context is the link's ('link'), not a tenant's.
  'mailbox.download.signed': { request: m.signedDownloadRequest, response: m.download },
  'mailbox.thread.list': { request: m.threadListRequest, response: m.threadList },
  'mailbox.thread.get': { request: m.threadRef, response: m.threadWithMessages },
  'mailbox.label.addToMessage': { request: m.labelsBody.extend({ id: idSchema('message') }), response: z.object({ message_id: idSchema('message'), labels: z.array(z.string()) }) },
  'mailbox.label.removeFromMessage': { request: m.labelsBody.extend({ id: idSchema('message') }), response: z.object({ message_id: idSchema('message'), labels: z.array(z.string()) }) },
  'mailbox.label.addToThread': { request: m.labelsBody.extend({ id: idSchema('thread') }), response: z.object({ thread_id: idSchema('thread'), labels: z.array(z.string()) }) },
  'mailbox.label.removeFromThread': { request: m.labelsBody.extend({ id: idSchema('thread') }), response: z.object({ thread_id: idSchema('thread'), labels: z.array(z.string()) }) },
  'mailbox.label.batch': { request: m.labelBatchRequest, response: z.object({ updated: z.number().int(), not_found: z.array(idSchema('message')) }) },
  'mailbox.label.list': { request: a.pageQuery, response: m.labelList },
  'mailbox.message.reply': { request: m.messageRef.extend(snd.replyRequest.shape), response: snd.sentMessageRef },
  'mailbox.message.replyAll': { request: m.messageRef.extend(snd.replyAllRequest.shape), response: snd.sentMessageRef },
  'mailbox.message.forward': { request: m.messageRef.extend(snd.forwardRequest.shape), response: snd.sentMessageRef },
  'mailbox.message.send': { request: snd.sendFields.extend({ inbox_id: idSchema('inbox') }).superRefine(snd.checkSend), response: snd.sentMessageRef },
  // Uploads (issue 31): the gateway streamed the bytes into MAIL_UPLOADS; mailbox records them.
  'mailbox.upload.register': { request: snd.uploadRegisterRequest, response: snd.uploadedAttachment },
  // mail-send
  'mail-send.outbound.check': { request: snd.sendCheckRequest, response: empty },
  'mail-send.suppression.list': { request: a.pageQuery, response: snd.suppressionList },
  'mail-send.suppression.add': { request: snd.suppressionCreateRequest, response: snd.suppression },
  'mail-send.suppression.delete': { request: snd.suppressionAddress, response: empty },
  'mail-send.ses.notification': { request: snd.snsNotificationRequest, response: empty },
  // webhooks
  'webhooks.endpoint.create': { request: w.webhookEndpointCreateRequest, response: w.webhookEndpointCreated },
  'webhooks.endpoint.list': { request: a.pageQuery, response: w.webhookEndpointList },
  'webhooks.endpoint.get': { request: w.webhookEndpointId, response: w.webhookEndpoint },
  'webhooks.endpoint.update': { request: w.webhookEndpointUpdateRequest, response: w.webhookEndpoint },
  'webhooks.endpoint.delete': { request: w.webhookEndpointId, response: empty },
  'webhooks.endpoint.recover': { request: w.webhookRecoverRequest, response: w.webhookRecoverResponse },
  'webhooks.recovery.get': { request: w.webhookRecoveryParams, response: w.webhookRecovery },
  'webhooks.delivery.list': { request: w.webhookDeliveryListRequest, response: w.webhookDeliveryList },
  'webhooks.delivery.redeliver': { request: w.webhookRedeliverParams, response: w.webhookRedeliverResponse },
  // Environments and their members (orgs).
  'orgs.environment.create': { request: env.environmentCreateBody, response: a.environment },
  'orgs.environment.list': { request: a.pageQuery, response: env.environmentList },
  'orgs.environment.show': { request: env.environmentParam, response: a.environment },
  'orgs.environment.rename': { request: env.environmentParam.extend(env.environmentUpdateBody.shape), response: a.environment },
  'orgs.environment.delete': { request: env.environmentParam, response: empty },
  /** For the gateway: the environment if this person (with this role) may act in it, else not_found. */
  'orgs.environment.access': {
    request: env.environmentScope.extend({ user_id: idSchema('user'), role: roleSchema }),
    response: a.environment,
  },
  'orgs.envMember.add': { request: env.environmentParam.extend(env.environmentMemberAddBody.shape), response: env.environmentMember },
  'orgs.envMember.list': { request: env.environmentParam.extend(a.pageQuery.shape), response: env.environmentMemberList },
  'orgs.envMember.remove': { request: env.environmentMemberParams, response: empty },
  // Counts of what an environment holds, for its deletion (services only).
  'mailbox.inbox.countInEnvironment': { request: env.environmentScope, response: env.resourceCount },
  'auth.apikey.countInEnvironment': { request: env.environmentScope, response: env.resourceCount },
  'webhooks.endpoint.countInEnvironment': { request: env.environmentScope, response: env.resourceCount },
  // Usage of an organization: orgs answers it from its own counts and its owners' (services only).
  'orgs.organization.usage': { request: empty, response: u.orgUsage },
  'mailbox.usage.count': { request: u.usageOrgRequest, response: u.mailboxUsage },
  'webhooks.usage.count': { request: u.usageOrgRequest, response: u.webhooksUsage },
  // orgs: ownership transfer
  'orgs.transfer.create': { request: own.ownershipTransferCreateBody, response: own.ownershipTransfer },
  'orgs.transfer.pending': { request: empty, response: own.ownershipTransferPending },
  'orgs.transfer.accept': { request: own.ownershipTransferId, response: own.ownershipTransfer },
  'orgs.transfer.cancel': { request: own.ownershipTransferId, response: own.ownershipTransfer },
  // orgs: invitations
  'orgs.invitation.create': { request: own.invitationCreateBody, response: own.invitation },
  'orgs.invitation.list': { request: a.pageQuery, response: own.invitationList },
  'orgs.invitation.revoke': { request: own.invitationId, response: empty },
  'orgs.invitation.accept': { request: own.invitationAcceptBody, response: own.invitationAccepted },
  // orgs: upgrade requests, and the decision of a platform operator (an admin context only)
  'orgs.upgrade.create': { request: upg.upgradeRequestCreateBody, response: upg.upgradeRequest },
  'orgs.upgrade.list': { request: a.pageQuery, response: upg.upgradeRequestList },
  'orgs.upgrade.get': { request: upg.upgradeRequestId, response: upg.upgradeRequest },
  'orgs.upgrade.decide': { request: upg.upgradeDecisionRequest, response: upg.upgradeRequest },
  'orgs.upgrade.listAll': { request: upg.upgradeRequestAdminQuery, response: upg.upgradeRequestList },
  /** For the services that create what plans limit (services only): the organization's plan and limits. */
  'orgs.organization.limits': { request: z.object({ org_id: idSchema('organization') }), response: upg.organizationLimits },
  // orgs: what auth asks of a person's organizations when their account is deleted, and purged (services only)
  'orgs.membership.owned': { request: z.object({ user_id: idSchema('user') }), response: life.ownedOrganizations },
  'orgs.membership.purgeUser': { request: z.object({ user_id: idSchema('user') }), response: life.userPurged },
  // auth: account deletion (soft, 30 days) and recovery
  'auth.user.delete': { request: life.accountDeleteBody, response: life.accountDeleted },
  'auth.user.recover': { request: life.accountRecoverBody, response: a.sessionResponse },
  // auth: email change, confirmed from the new address
  'auth.user.changeEmail': { request: life.emailChangeBody, response: v.mailQueued },
  'auth.user.confirmEmailChange': { request: life.emailChangeConfirmBody, response: a.user },
  // auth: the second factor (TOTP) and the login step that needs it
  'auth.mfa.status': { request: empty, response: mfa.mfaStatus },
  'auth.mfa.enrol': { request: empty, response: mfa.mfaEnrolment },
  'auth.mfa.confirm': { request: mfa.mfaConfirmBody, response: mfa.mfaConfirmed },
  'auth.mfa.remove': { request: mfa.mfaRemoveBody, response: empty },
  'auth.mfa.regenerateRecoveryCodes': { request: mfa.mfaCodeBody, response: mfa.recoveryCodes },
  'auth.mfa.verifyLogin': { request: mfa.mfaVerifyLoginBody, response: a.sessionResponse },
  // domains: custom domains, their DNS records and verification (issue 25)
  'domains.domain.create': { request: dom.domainCreateBody, response: dom.domain },
  'domains.domain.list': { request: a.pageQuery, response: dom.domainList },
  'domains.domain.get': { request: dom.domainId, response: dom.domain },
  'domains.domain.delete': { request: dom.domainId, response: empty },
  'domains.domain.verify': { request: dom.domainId, response: dom.domain },
  'domains.domain.zoneFile': { request: dom.domainId, response: dom.zoneFile },
  'domains.domain.countInEnvironment': { request: env.environmentScope, response: env.resourceCount },
  'domains.usage.count': { request: u.usageOrgRequest, response: dom.domainsUsage },
  'mailbox.inbox.listOnDomain': { request: dom.inboxesOnDomainRequest, response: dom.inboxesOnDomain },
  // metrics: hourly rollups of the public events (issue 27)
  'metrics.activity.get': { request: met.metricsQuery, response: met.metricsActivity },
  'metrics.summary.get': { request: met.metricsQuery, response: met.metricsSummary },
  'metrics.deliverability.get': { request: met.metricsQuery, response: met.metricsDeliverability },
  // For orgs' usage (GET /api/v1/org/usage): whole hours, so a calendar month's bounds are exact.
  'metrics.usage.count': { request: u.usageCountRequest, response: met.metricsUsage },
  // catch-all and inboxes on custom domains (issue 25, parts 5-6)
  'domains.domain.setCatchAll': { request: dom.catchAllBody.extend(dom.domainId.shape), response: dom.domain },
  'domains.domain.route': { request: dom.domainRouteRequest, response: dom.domainRoute },
  'domains.domain.status': { request: dom.domainStatusRequest, response: dom.domainStatus },
  'mailbox.inbox.ofEnvironment': { request: dom.inboxOfEnvironmentRequest, response: dom.inboxOfEnvironment },
  // admin: the platform operator's surface (issue 28)
  'admin.key.create': { request: adm.adminKeyCreateBody, response: adm.adminKeyCreated },
  'admin.key.list': { request: a.pageQuery, response: adm.adminKeyList },
  'admin.key.get': { request: adm.adminKeyId, response: adm.adminKey },
  'admin.key.revoke': { request: adm.adminKeyId, response: empty },
  'admin.key.verify': { request: adm.adminKeyVerifyRequest, response: adm.adminKeyVerification },
  // People's accounts, as the platform's operators see and suspend them (issue 28, part 5).
  'auth.adminUser.search': { request: adm.adminUserSearch, response: adm.adminUserList },
  'auth.adminUser.get': { request: adm.adminUserId, response: adm.adminUser },
  'auth.adminUser.suspend': { request: adm.userSuspendRequest, response: adm.adminUser },
  'auth.adminUser.unsuspend': { request: adm.adminUserId, response: adm.adminUser },
  // The audit log (issue 28, part 5).
  'admin.audit.list': { request: aud.auditLogQuery, response: aud.auditLog },
  // Sending with a custom domain's key (issue 25, part 7).
  'domains.domain.rotateDkim': { request: dom.domainId, response: dom.domain },
  'domains.domain.signingKey': { request: dom.signingKeyRequest, response: dom.signingKey },
  // auth: single sign-on per organization, its configurations and the OIDC login (issue 26)
  'auth.sso.create': { request: sso.ssoConfigCreateBody, response: sso.ssoConfig },
  'auth.sso.list': { request: empty, response: sso.ssoConfigList },
  'auth.sso.update': { request: sso.ssoConfigId.extend(sso.ssoConfigUpdateBody.shape), response: sso.ssoConfig },
  'auth.sso.delete': { request: sso.ssoConfigId, response: empty },
  'auth.sso.test': { request: sso.ssoConfigId, response: sso.ssoTestResult },
  'auth.sso.activate': { request: sso.ssoConfigId, response: sso.ssoConfig },
  'auth.sso.start': { request: sso.ssoLoginParam.extend(oa.browserBound.shape), response: sso.ssoAuthorization },
  'auth.sso.oidcCallback': { request: sso.ssoOidcCallbackBody.extend(oa.browserBound.shape), response: a.sessionResponse },
  'auth.sso.samlCallback': { request: sso.ssoSamlCallbackBody.extend(oa.browserBound.shape), response: a.sessionResponse },
  'auth.sso.samlMetadata': { request: sso.ssoSamlMetadataParam, response: sso.ssoSamlMetadata },
  /** For auth (services only): a just-in-time member of an organization whose SSO signed them in. */
  'orgs.membership.addForSso': { request: sso.ssoMemberRequest, response: a.membership },
  /** For auth (services only): the names among these an organization has verified (SSO admits their addresses). */
  'domains.domain.verifiedNames': { request: sso.verifiedDomainsRequest, response: sso.verifiedDomains },
  // Organization exports (issue 28, part 4): the operator's routes, and each service's own rows, paged (admin only).
  'admin.export.start': { request: exp.exportStartParams, response: exp.orgExport },
  'admin.export.list': { request: a.pageQuery, response: exp.orgExportList },
  'admin.export.get': { request: exp.exportId, response: exp.orgExport },
  'admin.export.download': { request: exp.exportId, response: m.download },
  'orgs.export.page': { request: exp.orgsExportPageRequest, response: exp.exportPage },
  'auth.export.page': { request: exp.authExportPageRequest, response: exp.exportPage },
  'mailbox.export.page': { request: exp.mailboxExportPageRequest, response: exp.exportPage },
  'webhooks.export.page': { request: exp.webhooksExportPageRequest, response: exp.exportPage },
  'domains.export.page': { request: exp.domainsExportPageRequest, response: exp.exportPage },
  // admin: the platform's health, its history and the alerts (issue 28, parts 2 and 3)
  'admin.health.get': { request: empty, response: hl.healthReport },
  'admin.health.history': { request: hl.healthHistoryQuery, response: hl.healthHistory },
  'admin.alert.list': { request: empty, response: hl.alertList },
  'admin.alert.update': { request: hl.alertUpdateRequest, response: hl.alert },
  /** For admin's alerts (services only): the platform's mail, disabled endpoints and failing domains since a time. */
  'metrics.platform.mail': { request: hl.platformSinceRequest, response: hl.platformMail },
  'webhooks.endpoint.countAutoDisabled': { request: hl.platformSinceRequest, response: hl.platformCount },
  'domains.domain.countFailed': { request: hl.platformSinceRequest, response: hl.platformCount },
} as const satisfies Record<string, { request: z.ZodType; response: z.ZodType }>;

export type RpcName = keyof typeof RPC;
export type RpcRequest<N extends RpcName> = z.input<(typeof RPC)[N]['request']>;
export type RpcParsedRequest<N extends RpcName> = z.output<(typeof RPC)[N]['request']>;
export type RpcResponse<N extends RpcName> = z.input<(typeof RPC)[N]['response']>;
export type RpcParsedResponse<N extends RpcName> = z.output<(typeof RPC)[N]['response']>;

/**
 * The catalog seen through each operation's own request and response types. Code generic in
 * the operation (`<N extends RpcName>`) parses through this view, so a parse gives
 * RpcParsedRequest<N> itself, not the union of every operation's (no cast needed).
 */
export const RPC_SCHEMAS: {
  readonly [N in RpcName]: { request: z.ZodType<RpcParsedRequest<N>, RpcRequest<N>>; response: z.ZodType<RpcParsedResponse<N>, RpcResponse<N>> };
} = RPC;

type ServiceOf<N extends string> = N extends `${infer S}.${string}` ? S : never;
export type RpcService = ServiceOf<RpcName>;
export type RpcNamesOf<S extends RpcService> = Extract<RpcName, `${S}.${string}`>;

export function rpcSubject(name: RpcName): string {
  return `rpc.${name}`;
}

export function rpcServiceOf(name: RpcName): RpcService {
  return name.slice(0, name.indexOf('.')) as RpcService;
}

export function rpcNamesOf<S extends RpcService>(service: S): RpcNamesOf<S>[] {
  return (Object.keys(RPC) as RpcName[]).filter((n): n is RpcNamesOf<S> => rpcServiceOf(n) === service);
}
