/**
 * The route table: the one description of the HTTP surface. The router and the OpenAPI
 * document are both built from it, so what is documented is what is served.
 */
import { z } from 'zod';
import {
  RPC,
  apiKeyCreateRequest,
  domainCreateBody,
  adminKeyCreateBody,
  auditLogQuery,
  adminUserId,
  adminUserSearch,
  userSuspendBody,
  alertKeyParam,
  alertUpdateBody,
  healthHistoryQuery,
  upgradeDecisionBody,
  upgradeRequestAdminQuery,
  adminKeyId,
  catchAllBody,
  domainId,
  environmentCreateBody,
  environmentMemberAddBody,
  environmentMemberParams,
  environmentParam,
  environmentUpdateBody,
  idSchema,
  inboxCreateRequest,
  inboxUpdateRequest,
  labelBatchRequest,
  labelsBody,
  loginRequest,
  memberId,
  invitationAcceptBody,
  invitationCreateBody,
  invitationId,
  ownershipTransferCreateBody,
  ownershipTransferId,
  memberUpdateBody,
  metricsQuery,
  messageListRequest,
  organizationUpdateRequest,
  pageQuery,
  passwordChangeBody,
  passwordResetBody,
  passwordResetRequest,
  verifyEmailRequest,
  refreshRequest,
  sessionParam,
  switchOrgRequest,
  userUpdateRequest,
  signupRequest,
  forwardRequest,
  replyAllRequest,
  replyRequest,
  sendRequest,
  signedDownloadRequest,
  uploadRegisterRequest,
  suppressionAddress,
  suppressionCreateRequest,
  threadListRequest,
  upgradeRequestCreateBody,
  upgradeRequestId,
  webhookEndpointCreateRequest,
  webhookEndpointId,
  webhookEndpointUpdateBody,
  webhookRecoverBody,
  webhookRecoveryParams,
  webhookRedeliverParams,
  mfaCodeBody,
  mfaConfirmBody,
  mfaRemoveBody,
  mfaVerifyLoginBody,
  routeAccess,
  oauthCallbackBody,
  oauthProviderParam,
  type RouteAccess,
  type RpcName,
  type RpcRequest,
  accountDeleteBody,
  accountRecoverBody,
  emailChangeBody,
  emailChangeConfirmBody,
  ssoConfigCreateBody,
  ssoConfigId,
  ssoConfigUpdateBody,
  ssoLoginParam,
  ssoOidcCallbackBody,
  exportId,
  exportStartParams,
  ssoSamlCallbackBody,
  ssoSamlMetadataParam,
} from '@mailroom/contracts';

/**
 * none: no credential (session-starting auth routes);
 * tenant: an API key or a user access token, acting in one org and environment;
 * user: a user access token only;
 * admin: an admin key;
 * signature: no credential, no per-address limit: the body is signed by its sender (a mail
 * provider's notification) and the service checks the signature, or the path is a signed
 * download link the gateway checks (signedLink).
 */
export type AuthMode = 'none' | 'tenant' | 'user' | 'admin' | 'signature';
export type Method = 'get' | 'post' | 'patch' | 'put' | 'delete';

/** What every route says about itself, for the router and the OpenAPI document. */
interface RouteBase {
  method: Method;
  /** OpenAPI style: /api/v1/keys/{id}. */
  path: string;
  auth: AuthMode;
  summary: string;
  tag: string;
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  status?: 200 | 201 | 202 | 204;
  /** Honours Idempotency-Key. */
  idempotent?: boolean;
  /** Also served at these paths (the spec's /admin aliases). */
  aliases?: string[];
  /**
   * On success the caller's session is over (true), or is when the path parameter `param`
   * names it: this gateway denies it at once, others on the revocation fact.
   */
  endsSession?: true | { param: string };
  /** The operation names a stored object; the gateway streams it (raw message, attachment). */
  download?: boolean;
  /**
   * The path's `token` is a signed download link (domain/download-links.ts): the gateway
   * verifies it and calls the operation, in the link's context, for what the link names.
   */
  signedLink?: boolean;
  /** The body's attachments may be given by URL: the gateway fetches them first (http/url-attachment.ts). */
  urlAttachments?: boolean;
  /** The answer is a message (or a thread of messages): the gateway adds its signed download links. */
  downloadLinks?: 'message' | 'thread';
  /**
   * The body is a file, streamed into the uploads bucket (http/upload.ts) before the operation
   * is called with what was stored (object, filename, content_type) as the body.
   */
  upload?: boolean;
  /** The body is passed on as text, whatever its Content-Type, as `body` (a signed payload). */
  textBody?: boolean;
  /** The operation answers a text document (`{content_type, text}`), sent as that content type instead of JSON. */
  textResponse?: boolean;
  /** The body is an HTML form (application/x-www-form-urlencoded), as browsers post it (the SAML HTTP-POST binding). */
  formBody?: boolean;
  /**
   * A sign-in attempt bound to the browser (login CSRF): `start` sets the `mailroom_login`
   * cookie (reusing a valid one) and `callback` reads it; either passes its value to the
   * operation as `browser_binding` (http/browser-binding.ts).
   */
  browserBinding?: 'start' | 'callback';
}

export type RoutePart = 'params' | 'query' | 'body';

/**
 * Parses one part of a request with the route's schema for it (and the gateway's own checks);
 * undefined where the route has none.
 */
export type PartParser = <S extends z.ZodType>(where: RoutePart, schema: S | undefined, value: unknown) => z.output<S> | undefined;

/** A request's parts as they arrive. */
export interface RequestParts {
  params: unknown;
  query: unknown;
  body: unknown;
}

/** A route answered by the operation `Op`: its parsed parts together make the request `In`. */
export interface OpRoute<Op extends RpcName, In = RpcRequest<Op>> extends RouteBase {
  op: Op;
  request(parse: PartParser, parts: RequestParts): In;
}

/** A route wired (so that it is documented and answers 501) before its operation exists. */
export interface PendingRoute extends RouteBase {
  op?: undefined;
}

/** A route of some operation, its request type tied to that operation. */
export type AnyOpRoute = { [Op in RpcName]: OpRoute<Op> }[RpcName];
export type Route = AnyOpRoute | PendingRoute;

/** A part a route has no schema for: it adds nothing to the request. */
type NoPart = z.ZodObject<Record<never, never>>;
type RouteSpec<P extends z.ZodObject, Q extends z.ZodObject, B extends z.ZodType> = Omit<RouteBase, 'params' | 'query' | 'body' | 'textBody'> & {
  params?: P;
  query?: Q;
  body?: B;
};
/** The request a route's parts make once parsed (a part it has no schema for makes nothing). */
type Made<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> = z.output<P> & z.output<Q> & z.output<B>;
/** Nothing where the parts make the operation's request; otherwise a property no route has, naming the operation. */
type Fits<Op extends RpcName, In> = [In] extends [RpcRequest<Op>] ? unknown : { 'params, query and body do not make the request of': Op };

/**
 * A route answered by `op`. Its params, query and body schemas must together make the
 * operation's request: a route that does not fit its operation fails to build.
 */
export function route<Op extends RpcName, P extends z.ZodObject = NoPart, Q extends z.ZodObject = NoPart, B extends z.ZodType = NoPart>(
  op: Op,
  spec: RouteSpec<P, Q, B> & Fits<Op, Made<P, Q, B>>,
): OpRoute<Op, Made<P, Q, B>> {
  const { params, query, body } = spec;
  return {
    ...spec,
    op,
    request(parse, parts) {
      // No prototype: a key such as __proto__ stays a key.
      const request: object = Object.create(null);
      return Object.assign(request, parse('params', params, parts.params), parse('query', query, parts.query), parse('body', body, parts.body));
    },
  };
}

/** A route whose body is passed on as text, as the request's `body`, whatever its Content-Type (a signed payload). */
export function textRoute<Op extends RpcName>(op: Op, spec: Omit<RouteSpec<NoPart, NoPart, NoPart>, 'params' | 'query' | 'body'> & Fits<Op, { body: string }>): OpRoute<Op, { body: string }> {
  return { ...spec, op, textBody: true, request: (_parse, parts) => ({ body: typeof parts.body === 'string' ? parts.body : '' }) };
}

/**
 * The route of signed download links: its path holds the token (documented as such), and the
 * operation's request is made from what the verified token names, passed as the params.
 */
function signedDownloadRoute(spec: Omit<RouteSpec<NoPart, NoPart, NoPart>, 'params' | 'query' | 'body'>): OpRoute<'mailbox.download.signed'> {
  return {
    ...spec,
    op: 'mailbox.download.signed',
    params: z.object({ token: z.string().describe('The signed token of a download_url') }),
    signedLink: true,
    download: true,
    request: (parse, parts) => parse('params', signedDownloadRequest, parts.params)!,
  };
}

const keyId = z.object({ id: idSchema('apiKey') });
const inboxId = z.object({ id: idSchema('inbox') });
const inboxParam = z.object({ inbox_id: idSchema('inbox') });
const messageParams = inboxParam.extend({ message_id: idSchema('message') });
const threadParams = inboxParam.extend({ thread_id: idSchema('thread') });
const messageId = z.object({ id: idSchema('message') });
const threadId = z.object({ id: idSchema('thread') });
/** A raw upload's file name; a multipart upload names its file in its part. */
const uploadQuery = z.object({ filename: z.string().optional() });

export const ROUTES: Route[] = [
  route('auth.user.signup', { method: 'post', path: '/api/v1/auth/signup', auth: 'none', body: signupRequest, status: 201, tag: 'Auth', summary: 'Create a user account and its organization; returns tokens' }),
  route('auth.user.login', { method: 'post', path: '/api/v1/auth/login', auth: 'none', body: loginRequest, tag: 'Auth', summary: 'Log in with email and password. 10 failures for one email, from any addresses, lock it: 429 with Retry-After, even for the right password, the same whether or not an account has the email (15 minutes, twice as long at each next lock). Answers a session (user, organization, tokens); or, when the account has MFA on, {mfa_required: true, mfa_token, expires_in} and no session: complete it with POST /api/v1/auth/mfa/verify-login within 5 minutes' }),
  route('auth.token.refresh', { method: 'post', path: '/api/v1/auth/refresh', auth: 'none', body: refreshRequest, tag: 'Auth', summary: 'Exchange a refresh token for a new token pair (rotating; reuse revokes the session)' }),
  route('auth.session.logout', { method: 'post', path: '/api/v1/auth/logout', auth: 'user', status: 204, endsSession: true, tag: 'Auth', summary: 'Log out and revoke the current session' }),
  route('auth.session.switchOrg', { method: 'post', path: '/api/v1/auth/switch-org', auth: 'user', body: switchOrgRequest, tag: 'Auth', summary: 'Start a session in another organization you belong to (your role there, its default environment), answered like login; 404 for one you do not belong to. The calling session is kept, still in its organization (log it out if it is not wanted)' }),
  route('auth.user.me', { method: 'get', path: '/api/v1/user/me', auth: 'user', tag: 'User', summary: 'Get the current user profile' }),
  route('auth.user.update', { method: 'patch', path: '/api/v1/user/me', auth: 'user', body: userUpdateRequest, tag: 'User', summary: 'Update the current user profile: name (1 to 200 characters, trimmed; null clears it). Answers the profile' }),
  route('auth.session.list', { method: 'get', path: '/api/v1/user/me/sessions', auth: 'user', query: pageQuery, tag: 'User', summary: 'List your live sessions, newest first: created_at; last_used_at (when tokens were last issued: sign-in, refresh or switch-org; access tokens are checked by gateways alone, so use between refreshes is not seen); ip and user_agent as seen then; current marks the session of this token' }),
  route('auth.session.revoke', { method: 'delete', path: '/api/v1/user/me/sessions/{sessionId}', auth: 'user', params: sessionParam, status: 204, endsSession: { param: 'sessionId' }, tag: 'User', summary: 'Revoke one of your sessions (this one too: a logout); its tokens are refused at once. Another person\'s session or an unknown id: 404' }),
  route('auth.session.revokeAll', { method: 'post', path: '/api/v1/user/me/sessions/revoke-all', auth: 'user', tag: 'User', summary: 'Revoke all your sessions but this one; their tokens are refused at once. Answers how many were revoked' }),
  route('auth.user.organizations', { method: 'get', path: '/api/v1/user/me/organizations', auth: 'user', query: pageQuery, tag: 'User', summary: 'List the organizations you belong to, oldest first, with your role, the default environment, and active: true for the one this token acts in' }),
  // Verification and passwords: a mail carries a 6-digit code (15 min, 5 attempts) and a link token; either works once.
  route('auth.email.verify', { method: 'post', path: '/api/v1/auth/verify-email', auth: 'none', body: verifyEmailRequest, tag: 'Auth', summary: 'Verify the email address with the token of the verification mail ({token}), or its code with the address ({email, code}); answers the user. A wrong, used, expired or exhausted code is 400 invalid_code, the same for every address; 10 wrong codes for one address lock its codes (429 with Retry-After; the link still works)' }),
  route('auth.email.resend', { method: 'post', path: '/api/v1/user/me/verify-email/resend', auth: 'user', status: 202, tag: 'User', summary: 'Send another verification mail (the previous code and link stop working); at most one a minute and 5 an hour (429 with Retry-After); 409 once verified' }),
  route('auth.password.resetRequest', { method: 'post', path: '/api/v1/auth/password/reset-request', auth: 'none', body: passwordResetRequest, status: 202, tag: 'Auth', summary: 'Ask for a password reset mail (code and link). Always 202 with the same body, at once, whether or not an account has the address; a mail goes out at most once a minute and 5 times an hour per account' }),
  route('auth.password.reset', { method: 'post', path: '/api/v1/auth/password/reset', auth: 'none', body: passwordResetBody, status: 204, tag: 'Auth', summary: 'Set a new password with the token of the reset mail, or its code with the address: every session of the account ends (access tokens refused within a second) and a notice is mailed. Codes and tokens work once; 10 wrong codes for one address lock its codes (429 with Retry-After; the link still works, and lifts a sign-in lock)' }),
  route('auth.password.change', { method: 'post', path: '/api/v1/user/me/change-password', auth: 'user', body: passwordChangeBody, status: 204, tag: 'User', summary: 'Change the password: the current one is asked again (wrong: 403; 5 wrong in 15 minutes: 429). Every other session ends; this one goes on' }),
  // Outside providers: sign in (public), and the providers linked to the signed-in person's account.
  route('auth.oauth.start', { method: 'get', path: '/api/v1/auth/oauth/{provider}', auth: 'none', params: oauthProviderParam, browserBinding: 'start', tag: 'Auth', summary: 'Start signing in with an outside provider (google, github, or an OpenID Connect provider of the configuration; another name: 404): answers the authorization_url to send the person to (state, nonce and PKCE kept here), the state, and when the attempt expires (10 minutes). The provider sends the person back to the web app with code and state. Sets the mailroom_login cookie (HttpOnly, Secure, SameSite=None, 10 minutes) the callback needs' }),
  route('auth.oauth.callback', { method: 'post', path: '/api/v1/auth/oauth/{provider}/callback', auth: 'none', params: oauthProviderParam, body: oauthCallbackBody, browserBinding: 'callback', tag: 'Auth', summary: 'Finish signing in with what the provider\'s redirect carried (code, state, and iss when sent); answered like login. An identity linked already signs in; otherwise it is linked to the account of its address when the provider says that address is verified (else 409 email_taken: sign in with the password and link from settings), or a new account is made. The state works once (400 invalid_state) With MFA on, the mfa_required answer of login (finish with POST /api/v1/auth/mfa/verify-login); an account deleted within 30 days: 403 account_deleted with a recovery token. Needs the mailroom_login cookie the start set in this browser (login CSRF; SAML: when RelayState names an attempt), else 400 invalid_state' }),
  route('auth.oauth.list', { method: 'get', path: '/api/v1/user/me/oauth-providers', auth: 'user', tag: 'User', summary: 'List the providers linked to your account (provider, email at the provider, linked_at, last_used_at), oldest link first; one per provider, so never more than one page' }),
  route('auth.oauth.unlink', { method: 'delete', path: '/api/v1/user/me/oauth-providers/{provider}', auth: 'user', params: oauthProviderParam, status: 204, tag: 'User', summary: 'Unlink a provider from your account; 409 when it is the last way to sign in (no password and no other configured provider linked); 404 when it is not linked' }),
  route('auth.oauth.linkStart', { method: 'post', path: '/api/v1/user/me/oauth-providers/{provider}', auth: 'user', params: oauthProviderParam, tag: 'User', summary: 'Start linking a provider to your account: answers the authorization_url, state and expires_at, as signing in does; the attempt is yours alone' }),
  route('auth.oauth.linkCallback', { method: 'post', path: '/api/v1/user/me/oauth-providers/{provider}/callback', auth: 'user', params: oauthProviderParam, body: oauthCallbackBody, tag: 'User', summary: 'Finish linking with what the provider\'s redirect carried (code, state, iss), signed in as the person who started it (else 400 invalid_state); answers the link. An identity linked to another account, or a second identity of one provider: 409' }),
  route('auth.apikey.create', { method: 'post', path: '/api/v1/keys', auth: 'tenant', body: apiKeyCreateRequest, status: 201, idempotent: true, tag: 'API keys', summary: 'Create an API key (the secret is in this answer only)' }),
  route('auth.apikey.list', { method: 'get', path: '/api/v1/keys', auth: 'tenant', query: pageQuery, tag: 'API keys', summary: 'List API keys of the organization, newest first' }),
  route('auth.apikey.get', { method: 'get', path: '/api/v1/keys/{id}', auth: 'tenant', params: keyId, tag: 'API keys', summary: 'Get an API key (without its secret)' }),
  route('auth.apikey.delete', { method: 'delete', path: '/api/v1/keys/{id}', auth: 'tenant', params: keyId, status: 204, tag: 'API keys', summary: 'Revoke an API key; requests with it fail within a second' }),
  route('orgs.organization.get', { method: 'get', path: '/api/v1/org', auth: 'tenant', tag: 'Organization', summary: 'Get the organization the credential acts in' }),
  route('orgs.organization.update', { method: 'patch', path: '/api/v1/org', auth: 'tenant', body: organizationUpdateRequest, tag: 'Organization', summary: 'Rename the organization, or pause its sending (status: paused; every send is refused with account_paused, mail still arrives) and resume it. Owners and admins signed in only' }),
  route('orgs.organization.usage', { method: 'get', path: '/api/v1/org/usage', auth: 'tenant', tag: 'Organization', summary: "The organization's usage against its plan's limits, over every environment whichever one the credential acts in: inboxes, domains (0 until custom domains are served), members (pending invitations included, as the limit counts them), environments and webhook endpoints held now, and messages sent (accepted by the mail provider) and received (stored, spam not counted) in the current period, the calendar month in UTC (period.end excluded). limit null: no limit (messages are not capped by plan). Each count comes from the service that owns it; if one does not answer, the answer is a 503 naming it, never partial counts" }),
  // Members of the organization the credential acts in; people (user tokens) only.
  route('orgs.member.list', { method: 'get', path: '/api/v1/org/members', auth: 'tenant', query: pageQuery, tag: 'Members', summary: 'List the members of the organization, oldest first, with each person\'s name and email' }),
  route('orgs.member.get', { method: 'get', path: '/api/v1/org/members/{id}', auth: 'tenant', params: memberId, tag: 'Members', summary: 'Get a member' }),
  route('orgs.member.update', { method: 'patch', path: '/api/v1/org/members/{id}', auth: 'tenant', params: memberId, body: memberUpdateBody, tag: 'Members', summary: 'Change a member\'s role (admin, member, viewer). Owners and admins; not your own role, not the owner\'s (ownership moves by transfer); the member\'s tokens act with the new role within a second' }),
  route('orgs.member.remove', { method: 'delete', path: '/api/v1/org/members/{id}', auth: 'tenant', params: memberId, status: 204, tag: 'Members', summary: 'Remove a member (not the owner, not yourself: leave instead). Their access tokens for the organization are refused within a second; API keys they created keep working (keys belong to the organization and environment)' }),
  route('orgs.member.leave', { method: 'post', path: '/api/v1/org/members/leave', auth: 'user', status: 204, tag: 'Members', summary: 'Leave the organization (anyone but the owner, who transfers ownership first). Your access tokens for it are refused within a second' }),
  route('mailbox.inbox.create', { method: 'post', path: '/api/v1/inboxes', auth: 'tenant', body: inboxCreateRequest, status: 201, idempotent: true, tag: 'Inboxes', summary: 'Create an inbox (username generated when absent; domain defaults to MAIL_DOMAIN)' }),
  route('mailbox.inbox.list', { method: 'get', path: '/api/v1/inboxes', auth: 'tenant', query: pageQuery, tag: 'Inboxes', summary: 'List inboxes, newest first' }),
  route('mailbox.inbox.get', { method: 'get', path: '/api/v1/inboxes/{id}', auth: 'tenant', params: inboxId, tag: 'Inboxes', summary: 'Get an inbox' }),
  route('mailbox.inbox.update', { method: 'patch', path: '/api/v1/inboxes/{id}', auth: 'tenant', params: inboxId, body: inboxUpdateRequest, tag: 'Inboxes', summary: 'Update display_name, or pause (status: paused: mail still arrives, sending is refused)' }),
  route('mailbox.inbox.delete', { method: 'delete', path: '/api/v1/inboxes/{id}', auth: 'tenant', params: inboxId, status: 204, tag: 'Inboxes', summary: 'Delete an inbox; mail to it is refused from then on' }),
  route('mailbox.inbox.resume', { method: 'post', path: '/api/v1/inboxes/{id}/resume', auth: 'tenant', params: inboxId, tag: 'Inboxes', summary: 'Resume a paused inbox' }),
  route('mailbox.message.list', { method: 'get', path: '/api/v1/inboxes/{inbox_id}/messages', auth: 'tenant', params: inboxParam, query: messageListRequest.omit({ inbox_id: true }), tag: 'Messages', summary: 'List messages of an inbox, newest first (filters: label, before, after)' }),
  route('mailbox.message.get', { method: 'get', path: '/api/v1/inboxes/{inbox_id}/messages/{message_id}', auth: 'tenant', params: messageParams, downloadLinks: 'message', tag: 'Messages', summary: 'Get a message, with signed links (raw_download_url, each attachment\'s download_url) that need no Authorization header until download_urls_expire_at (DOWNLOAD_LINK_TTL_SECONDS, an hour by default)' }),
  route('mailbox.message.raw', { method: 'get', path: '/api/v1/inboxes/{inbox_id}/messages/{message_id}/raw', auth: 'tenant', params: messageParams, download: true, tag: 'Messages', summary: 'Download the raw message (message/rfc822), byte for byte as received' }),
  signedDownloadRoute({ method: 'get', path: '/api/v1/downloads/{token}', auth: 'signature', tag: 'Messages', summary: 'Download what a signed link names (a download_url or raw_download_url of a message read), streamed, without an Authorization header: the link is the credential. An altered or expired link is 403' }),
  route('mailbox.attachment.get', { method: 'get', path: '/api/v1/inboxes/{inbox_id}/messages/{message_id}/attachments/{attachment_id}', auth: 'tenant', params: messageParams.extend({ attachment_id: idSchema('attachment') }), download: true, tag: 'Messages', summary: 'Download an attachment' }),
  route('mailbox.message.reply', { method: 'post', path: '/api/v1/inboxes/{inbox_id}/messages/{message_id}/reply', auth: 'tenant', params: messageParams, body: replyRequest, idempotent: true, urlAttachments: true, tag: 'Messages', summary: 'Reply to a message: stored in its thread at once, sent asynchronously (message.sent, then delivered/bounced). Refused sends answer blocked_recipient, rate_limited or account_paused, and emit message.rejected' }),
  route('mailbox.message.replyAll', { method: 'post', path: '/api/v1/inboxes/{inbox_id}/messages/{message_id}/reply-all', auth: 'tenant', params: messageParams, body: replyAllRequest, idempotent: true, urlAttachments: true, tag: 'Messages', summary: 'Reply to the sender and every other recipient (To and Cc of the original, less the inbox itself) in Cc; like reply otherwise' }),
  route('mailbox.message.forward', { method: 'post', path: '/api/v1/inboxes/{inbox_id}/messages/{message_id}/forward', auth: 'tenant', params: messageParams, body: forwardRequest, idempotent: true, urlAttachments: true, tag: 'Messages', summary: 'Forward a message with its attachments, its text quoted under a "Forwarded message" header; stored in the same thread' }),
  route('mailbox.upload.register', { method: 'post', path: '/api/v1/attachments', auth: 'tenant', query: uploadQuery, body: uploadRegisterRequest, upload: true, status: 201, tag: 'Messages', summary: 'Upload a file to attach (at most SEND_MAX_MESSAGE_BYTES, 25 MB by default, else 413): multipart/form-data with one file part (its filename and Content-Type), or the bytes themselves with their Content-Type and ?filename=. Streamed to storage. Answers {attachment_id, filename, content_type, size, sha256, expires_at}; send, reply, reply-all and forward take attachments: [{attachment_id}] for 24 hours (then 410), in this environment only (elsewhere 404)' }),
  route('mailbox.message.send', { method: 'post', path: '/api/v1/inboxes/{inbox_id}/messages/send', auth: 'tenant', params: inboxParam, body: sendRequest, idempotent: true, urlAttachments: true, tag: 'Messages', summary: 'Send a new message (new thread): to, cc, bcc (50 recipients in all), subject, text_body and/or html_body, attachments (each {filename, content_type, content_base64}, 512 KiB in all, {attachment_id} of an upload, or {url, filename?, content_type?} fetched by the server when the send is made, public addresses only; the message at most SEND_MAX_MESSAGE_BYTES, else 413), custom X- headers' }),
  route('mail-send.suppression.list', { method: 'get', path: '/api/v1/suppressions', auth: 'tenant', query: pageQuery, tag: 'Suppressions', summary: 'Addresses mail is not sent to (hard bounces, complaints, added by hand), newest first' }),
  route('mail-send.suppression.add', { method: 'post', path: '/api/v1/suppressions', auth: 'tenant', body: suppressionCreateRequest, status: 201, tag: 'Suppressions', summary: 'Add an address to the suppression list' }),
  route('mail-send.suppression.delete', { method: 'delete', path: '/api/v1/suppressions/{address}', auth: 'tenant', params: suppressionAddress, status: 204, tag: 'Suppressions', summary: 'Remove an address from the suppression list: mail to it is sent again' }),
  route('mailbox.thread.list', { method: 'get', path: '/api/v1/inboxes/{inbox_id}/threads', auth: 'tenant', params: inboxParam, query: threadListRequest.omit({ inbox_id: true }), tag: 'Threads', summary: 'List threads of an inbox, most recent activity first' }),
  route('mailbox.thread.get', { method: 'get', path: '/api/v1/inboxes/{inbox_id}/threads/{thread_id}', auth: 'tenant', params: threadParams, downloadLinks: 'thread', tag: 'Threads', summary: 'Get a thread with its messages, oldest first' }),
  route('mailbox.label.addToMessage', { method: 'post', path: '/api/v1/messages/{id}/labels', auth: 'tenant', params: messageId, body: labelsBody, tag: 'Labels', summary: 'Add labels to a message' }),
  route('mailbox.label.removeFromMessage', { method: 'delete', path: '/api/v1/messages/{id}/labels', auth: 'tenant', params: messageId, body: labelsBody, tag: 'Labels', summary: 'Remove labels from a message (system labels cannot be removed)' }),
  route('mailbox.label.addToThread', { method: 'post', path: '/api/v1/threads/{id}/labels', auth: 'tenant', params: threadId, body: labelsBody, tag: 'Labels', summary: 'Add labels to every message of a thread' }),
  route('mailbox.label.removeFromThread', { method: 'delete', path: '/api/v1/threads/{id}/labels', auth: 'tenant', params: threadId, body: labelsBody, tag: 'Labels', summary: 'Remove labels from every message of a thread' }),
  route('mailbox.label.batch', { method: 'post', path: '/api/v1/labels/batch', auth: 'tenant', body: labelBatchRequest, tag: 'Labels', summary: 'Add and remove labels on up to 100 messages at once' }),
  route('mailbox.label.list', { method: 'get', path: '/api/v1/labels', auth: 'tenant', query: pageQuery, tag: 'Labels', summary: 'Labels in use, with message counts, by name' }),
  textRoute('mail-send.ses.notification', { method: 'post', path: '/api/v1/providers/ses/notifications', auth: 'signature', status: 204, tag: 'Providers', summary: 'Amazon SNS endpoint for SES notifications (delivery, bounce, complaint): subscribe it to the configured topics. The SNS signature is verified and the topic must be one of SES_SNS_TOPIC_ARNS; each notification is applied once' }),
  // Webhooks: endpoints and delivery records of the environment the credential acts in.
  route('webhooks.endpoint.create', { method: 'post', path: '/api/v1/webhooks/endpoints', auth: 'tenant', body: webhookEndpointCreateRequest, status: 201, idempotent: true, tag: 'Webhooks', summary: 'Create a webhook endpoint; events omitted = every event type, including types added later. The secret (whsec_...) is in this answer only' }),
  route('webhooks.endpoint.list', { method: 'get', path: '/api/v1/webhooks/endpoints', auth: 'tenant', query: pageQuery, tag: 'Webhooks', summary: 'List webhook endpoints, newest first (without secrets)' }),
  route('webhooks.endpoint.get', { method: 'get', path: '/api/v1/webhooks/endpoints/{id}', auth: 'tenant', params: webhookEndpointId, tag: 'Webhooks', summary: 'Get a webhook endpoint (without its secret)' }),
  route('webhooks.endpoint.update', { method: 'patch', path: '/api/v1/webhooks/endpoints/{id}', auth: 'tenant', params: webhookEndpointId, body: webhookEndpointUpdateBody, tag: 'Webhooks', summary: 'Update url, events or description; disabled: false re-enables and resets the failure count' }),
  route('webhooks.endpoint.delete', { method: 'delete', path: '/api/v1/webhooks/endpoints/{id}', auth: 'tenant', params: webhookEndpointId, status: 204, tag: 'Webhooks', summary: 'Delete a webhook endpoint and its delivery records' }),
  route('webhooks.delivery.list', { method: 'get', path: '/api/v1/webhooks/endpoints/{id}/deliveries', auth: 'tenant', params: webhookEndpointId, query: pageQuery, tag: 'Webhooks', summary: 'Delivery records of an endpoint, one per attempt, newest first' }),
  route('webhooks.delivery.redeliver', { method: 'post', path: '/api/v1/webhooks/endpoints/{id}/deliveries/{delivery_id}/redeliver', auth: 'tenant', params: webhookRedeliverParams, status: 202, tag: 'Webhooks', summary: 'Send the event of a delivery again, once (same event id and body); 409 on a disabled endpoint' }),
  route('webhooks.endpoint.recover', { method: 'post', path: '/api/v1/webhooks/endpoints/{id}/recover', auth: 'tenant', params: webhookEndpointId, body: webhookRecoverBody, status: 202, tag: 'Webhooks', summary: 'Start a recovery: the events of [since, until) (at most 14 days) without a successful delivery to this endpoint are sent again. It runs in the background (follow it at the recovery\'s URL); 409 while one runs for the endpoint' }),
  route('webhooks.recovery.get', { method: 'get', path: '/api/v1/webhooks/endpoints/{id}/recoveries/{recovery_id}', auth: 'tenant', params: webhookRecoveryParams, tag: 'Webhooks', summary: 'A recovery of an endpoint: running, finished or failed, and how many events it queued' }),
  // Environments of the organization, and who may act in each (owners and admins: every one).
  route('orgs.environment.create', { method: 'post', path: '/api/v1/environments', auth: 'tenant', body: environmentCreateBody, status: 201, tag: 'Environments', summary: 'Create an environment (owners and admins); names are unique in the organization. Act in it with X-Env-Id, or with an API key created there' }),
  route('orgs.environment.list', { method: 'get', path: '/api/v1/environments', auth: 'tenant', query: pageQuery, tag: 'Environments', summary: 'List environments, oldest first: every one for owners and admins, the default one and those you are a member of for others' }),
  route('orgs.environment.show', { method: 'get', path: '/api/v1/environments/{env_id}', auth: 'tenant', params: environmentParam, tag: 'Environments', summary: 'Get an environment (404 for one you are not a member of)' }),
  route('orgs.environment.rename', { method: 'patch', path: '/api/v1/environments/{env_id}', auth: 'tenant', params: environmentParam, body: environmentUpdateBody, tag: 'Environments', summary: 'Rename an environment (owners and admins)' }),
  route('orgs.environment.delete', { method: 'delete', path: '/api/v1/environments/{env_id}', auth: 'tenant', params: environmentParam, status: 204, tag: 'Environments', summary: 'Delete an environment (owners and admins): 409 for the default one, and for one that still holds inboxes, API keys or webhook endpoints' }),
  route('orgs.envMember.add', { method: 'post', path: '/api/v1/environments/{env_id}/members', auth: 'tenant', params: environmentParam, body: environmentMemberAddBody, status: 201, tag: 'Environment members', summary: 'Give a member of the organization the environment (owners and admins); 409 if they have it, or for the default environment (every member is in it)' }),
  route('orgs.envMember.list', { method: 'get', path: '/api/v1/environments/{env_id}/members', auth: 'tenant', params: environmentParam, query: pageQuery, tag: 'Environment members', summary: 'Members who may act in the environment, with names and emails (owners and admins act in every environment besides)' }),
  route('orgs.envMember.remove', { method: 'delete', path: '/api/v1/environments/{env_id}/members/{member_id}', auth: 'tenant', params: environmentMemberParams, status: 204, tag: 'Environment members', summary: 'Take the environment from a member (owners and admins); their tokens are refused in it within a second' }),
  // Admin operations: wired with their aliases, answered when the admin service lands.
  // Admin keys (issue 28): the first from the command (node services/admin/dist/cli.js create-key), the others here.
  route('admin.key.create', { method: 'post', path: '/api/v1/admin/keys', auth: 'admin', body: adminKeyCreateBody, status: 201, idempotent: true, tag: 'Admin', summary: 'Create an admin key ({name, expires_at?}); the key (mra_...) is in this answer only, stored as a hash. An expiry not in the future is a 400' }),
  route('admin.key.list', { method: 'get', path: '/api/v1/admin/keys', auth: 'admin', query: pageQuery, tag: 'Admin', summary: 'List admin keys, newest first, revoked and expired ones included (never the keys themselves)' }),
  route('admin.key.get', { method: 'get', path: '/api/v1/admin/keys/{id}', auth: 'admin', params: adminKeyId, tag: 'Admin', summary: 'Get an admin key: name, prefix, who made it, expiry, last use (to the minute), revocation' }),
  route('orgs.upgrade.listAll', { method: 'get', path: '/api/v1/admin/upgrade-requests', auth: 'admin', query: upgradeRequestAdminQuery, tag: 'Admin', summary: 'Every organization\'s upgrade requests, newest first; ?status=pending for those waiting, ?org_id= for one organization' }),
  route('orgs.upgrade.decide', { method: 'post', path: '/api/v1/admin/upgrade-requests/{id}/decision', auth: 'admin', params: upgradeRequestId, body: upgradeDecisionBody, tag: 'Admin', summary: 'Approve (the organization is on the plan asked for, and its limits, at once) or decline an upgrade request, with an optional note the organization sees. A decided request is 409, an expired one 410' }),
  route('admin.key.revoke', { method: 'delete', path: '/api/v1/admin/keys/{id}', auth: 'admin', params: adminKeyId, status: 204, tag: 'Admin', summary: 'Revoke an admin key (itself included): refused everywhere within a second. Revoking again changes nothing' }),
  // People's accounts (issue 28, part 5): found by address or id, suspended and lifted.
  route('auth.adminUser.search', { method: 'get', path: '/api/v1/admin/users', auth: 'admin', query: adminUserSearch, tag: 'Admin', summary: 'Find an account by email (exact, any case) or id, in any state until purged: live, deleted (within its 30-day window) or suspended, with its organizations and roles' }),
  route('auth.adminUser.get', { method: 'get', path: '/api/v1/admin/users/{id}', auth: 'admin', params: adminUserId, tag: 'Admin', summary: 'An account: its state (deleted_at, suspended_at and the reason) and its organizations' }),
  route('auth.adminUser.suspend', { method: 'post', path: '/api/v1/admin/users/{id}/suspend', auth: 'admin', params: adminUserId, body: userSuspendBody, tag: 'Admin', summary: 'Suspend an account ({reason}): its sessions end (refused everywhere within a second), no sign-in of any kind opens a session (403 account_suspended), and the API keys it created stop acting. 409 if it is suspended already' }),
  route('auth.adminUser.unsuspend', { method: 'post', path: '/api/v1/admin/users/{id}/unsuspend', auth: 'admin', params: adminUserId, tag: 'Admin', summary: 'Lift a suspension: the person can sign in again and their API keys act again (ended sessions stay ended). 409 if it is not suspended' }),
  route('admin.audit.list', { method: 'get', path: '/api/v1/admin/audit-log', auth: 'admin', query: auditLogQuery, tag: 'Admin', summary: 'The audit log, newest first: every admin action and the security-relevant actions of tenants (API keys created and revoked, roles changed, members removed, ownership transferred, SSO changed, domains deleted, users suspended), kept a year. Filters: org_id, action, actor_id, target_id, from (included), to (excluded)' }),
  route('admin.export.start', { method: 'post', path: '/api/v1/admin/orgs/{id}/export', auth: 'admin', params: exportStartParams, status: 202, idempotent: true, tag: 'Admin', summary: 'Start exporting an organization: one zip archive of NDJSON per resource and every raw message as .eml (README, Organization exports). Answers the export (queued); 404 for an unknown organization, 409 naming the export already running for it' }),
  route('admin.export.list', { method: 'get', path: '/api/v1/admin/exports', auth: 'admin', query: pageQuery, tag: 'Admin', summary: 'List exports, newest first, with status, size and progress' }),
  route('admin.export.get', { method: 'get', path: '/api/v1/admin/exports/{id}', auth: 'admin', params: exportId, tag: 'Admin', summary: 'Get an export: status (queued, running, completed, failed, expired), progress, size and download_url once completed. Archives are deleted 7 days after they finish' }),
  // The platform's health, its history and alerts (issue 28, parts 2 and 3).
  route('admin.health.get', { method: 'get', path: '/api/v1/admin/health', auth: 'admin', aliases: ['/admin/health'], tag: 'Admin', summary: "The platform's health now: status ok, degraded or down with its reasons; each service's running instances (version, uptime); PostgreSQL (reachable, replication lag); NATS and JetStream (stream sizes, every durable consumer's backlog); rspamd; the send relay" }),
  route('admin.health.history', { method: 'get', path: '/api/v1/admin/health/history', auth: 'admin', aliases: ['/admin/health/history'], query: healthHistoryQuery, tag: 'Admin', summary: 'Health samples (one per interval, kept 30 days), oldest first, in [from, to) (default: the last day; at most 31 days); changes_only=true for the samples whose status changed; limit and page_token as every list' }),
  route('admin.alert.list', { method: 'get', path: '/api/v1/admin/alerts', auth: 'admin', aliases: ['/admin/alerts'], tag: 'Admin', summary: 'Every alert rule with its thresholds, state (ok, firing, acknowledged, muted), what its last evaluation saw and its last transitions' }),
  route('admin.alert.update', { method: 'patch', path: '/api/v1/admin/alerts/{key}', auth: 'admin', aliases: ['/admin/alerts/{key}'], params: alertKeyParam, body: alertUpdateBody, tag: 'Admin', summary: 'Acknowledge a firing alert ({acknowledge: true}; 409 when it is not firing), mute it until a time ({mute_until}; null unmutes), or change some of its thresholds ({thresholds}; invalid: 400). Unknown key: 404' }),
  // Ownership transfer: one pending request per organization, expiring after 7 days.
  route('orgs.transfer.create', { method: 'post', path: '/api/v1/org/transfer-ownership', auth: 'user', body: ownershipTransferCreateBody, status: 201, tag: 'Members', summary: 'Ask a member to take the organization over (owner only). One pending request at a time (else 409); it expires after 7 days. Both of you are told by email' }),
  route('orgs.transfer.pending', { method: 'get', path: '/api/v1/org/transfer-ownership/pending', auth: 'user', tag: 'Members', summary: 'The pending ownership transfer of the organization: data holds none or one' }),
  route('orgs.transfer.accept', { method: 'post', path: '/api/v1/org/transfer-ownership/{id}/accept', auth: 'user', params: ownershipTransferId, tag: 'Members', summary: 'Accept a transfer addressed to you: you become owner and the owner becomes admin, at once; tokens act with the new roles within a second. An expired request answers 410, a decided one 409' }),
  route('orgs.invitation.create', { method: 'post', path: '/api/v1/org/invitations', auth: 'user', body: invitationCreateBody, status: 201, tag: 'Members', summary: 'Invite a person by email with a role (admin, member or viewer); owners and admins. The token goes by mail only and expires after 7 days. An address that is a member already: 409; one with a pending invitation: that invitation is replaced (a resend)' }),
  route('orgs.invitation.list', { method: 'get', path: '/api/v1/org/invitations', auth: 'user', query: pageQuery, tag: 'Members', summary: 'List invitations, newest first (pending, accepted, revoked, expired)' }),
  route('orgs.invitation.revoke', { method: 'delete', path: '/api/v1/org/invitations/{id}', auth: 'user', params: invitationId, status: 204, tag: 'Members', summary: 'Revoke a pending invitation: its token stops working' }),
  route('orgs.invitation.accept', { method: 'post', path: '/api/v1/invitations/accept', auth: 'user', body: invitationAcceptBody, tag: 'Members', summary: 'Accept an invitation with the token of its mail, signed in with an account of the invited address (else 403): you become a member with its role. Unknown token 404; used or revoked 409; expired 410' }),
  // Upgrade requests: one pending per organization, decided later by a platform operator.
  route('orgs.upgrade.create', { method: 'post', path: '/api/v1/org/upgrade-request', auth: 'user', body: upgradeRequestCreateBody, status: 201, idempotent: true, tag: 'Organization', summary: 'Ask for another plan (free, pro, enterprise), with a message of up to 2000 characters; owners and admins signed in. One pending request at a time (else 409); the plan the organization is on is 409. A platform operator approves or declines it; on approval the organization is on the new plan and its limits at once' }),
  route('orgs.upgrade.list', { method: 'get', path: '/api/v1/org/upgrade-requests', auth: 'tenant', query: pageQuery, tag: 'Organization', summary: 'List the upgrade requests of the organization, newest first (pending, approved, declined)' }),
  route('orgs.upgrade.get', { method: 'get', path: '/api/v1/org/upgrade-requests/{id}', auth: 'tenant', params: upgradeRequestId, tag: 'Organization', summary: 'Get an upgrade request: its status, and when and with what note it was decided' }),
  route('orgs.transfer.cancel', { method: 'post', path: '/api/v1/org/transfer-ownership/{id}/cancel', auth: 'user', params: ownershipTransferId, tag: 'Members', summary: 'Cancel the pending transfer (owner only). An expired request answers 410, a decided one 409' }),
  // A person's account: soft deletion, recovery within 30 days.
  route('auth.user.delete', { method: 'delete', path: '/api/v1/user/me', auth: 'user', body: accountDeleteBody, endsSession: true, tag: 'User', summary: 'Delete your account (password asked again): every session ends, the API keys you created stop working, a notice is mailed. Recoverable for 30 days (login answers 403 account_deleted with a recovery_token), then purged. The owner of an organization with other members transfers it first (409 naming it)' }),
  route('auth.user.recover', { method: 'post', path: '/api/v1/user/me/recover', auth: 'none', body: accountRecoverBody, tag: 'User', summary: 'Recover your deleted account within 30 days with the recovery_token of the login answer (403 account_deleted; the token works once for 15 minutes): answered like login. Unknown or used token 400 invalid_code; expired token or window 410 expired' }),
  // Email change, confirmed from the new address.
  route('auth.user.changeEmail', { method: 'post', path: '/api/v1/user/me/change-email', auth: 'user', body: emailChangeBody, status: 202, tag: 'User', summary: 'Ask to change your email address (current_password asked again; wrong: 403): a code and a link go to new_email, a notice to the current address; nothing changes until confirmed. An address another account has: 409 email_taken; at most one mail a minute and 5 an hour (429)' }),
  route('auth.user.confirmEmailChange', { method: 'post', path: '/api/v1/user/me/change-email/confirm', auth: 'user', body: emailChangeConfirmBody, tag: 'User', summary: 'Confirm the change with the token ({token}) or the code ({code}) of the mail sent to the new address, signed in to the same account: the address changes and counts as verified, every other session ends; answers the user. Taken by another account meanwhile: 409 email_taken' }),
  // The second factor (TOTP: SHA-1, 6 digits, 30 s) and the login step that needs it.
  route('auth.mfa.status', { method: 'get', path: '/api/v1/user/me/mfa', auth: 'user', tag: 'MFA', summary: 'Whether MFA is on and since when, whether an enrolment waits for its confirmation, and how many recovery codes are left' }),
  route('auth.mfa.enrol', { method: 'post', path: '/api/v1/user/me/mfa/enrol', auth: 'user', tag: 'MFA', summary: 'Start an enrolment: a new TOTP secret (otpauth:// URI for a QR code, and base32), pending until confirmed; a new enrolment replaces a pending one. 409 while MFA is on' }),
  route('auth.mfa.confirm', { method: 'post', path: '/api/v1/user/me/mfa/confirm', auth: 'user', body: mfaConfirmBody, tag: 'MFA', summary: 'Turn MFA on with a current code of the enrolled secret; answers the ten recovery codes, once (each works once). A wrong code is 403; 5 wrong in 15 minutes and you wait (429). A notice is mailed' }),
  route('auth.mfa.remove', { method: 'delete', path: '/api/v1/user/me/mfa', auth: 'user', body: mfaRemoveBody, status: 204, tag: 'MFA', summary: 'Turn MFA off with the password ({password}) or a current code, authenticator or recovery ({code}); the secret and the recovery codes are deleted. Wrong: 403 (5 in 15 minutes: 429); MFA off: 409. A notice is mailed' }),
  route('auth.mfa.regenerateRecoveryCodes', { method: 'post', path: '/api/v1/user/me/mfa/recovery-codes', auth: 'user', body: mfaCodeBody, tag: 'MFA', summary: 'Replace every recovery code with ten new ones, answered once, given a current code (authenticator or recovery). Wrong: 403 (5 in 15 minutes: 429). A notice is mailed' }),
  route('auth.mfa.verifyLogin', { method: 'post', path: '/api/v1/auth/mfa/verify-login', auth: 'none', body: mfaVerifyLoginBody, tag: 'Auth', summary: 'Complete a login that answered mfa_required: the mfa_token and a current code of the authenticator (each 30-second code once) or a recovery code (once); answers the session like login. A wrong code is 401 invalid_credentials; after 5 attempts, or 5 minutes, or once used, the mfa_token is dead (401 unauthorized: log in again)' }),
  // Custom domains (issue 25): records to publish, checked by a job and on demand; domain.verified on the first verification.
  route('domains.domain.create', { method: 'post', path: '/api/v1/domains', auth: 'tenant', body: domainCreateBody, status: 201, idempotent: true, tag: 'Domains', summary: 'Add a custom domain (IDNA names are stored as A-labels; a public suffix alone, an IP address or the platform\'s own domain is a 400; a name this environment has, or one another organization has verified, is a 409; past the plan\'s limit 403 plan_limit). Answers the records to publish: MX, SPF, DKIM (a key pair made for this domain), DMARC and the bounce CNAME' }),
  route('domains.domain.list', { method: 'get', path: '/api/v1/domains', auth: 'tenant', query: pageQuery, tag: 'Domains', summary: 'List the domains of the environment, newest first' }),
  route('domains.domain.get', { method: 'get', path: '/api/v1/domains/{id}', auth: 'tenant', params: domainId, tag: 'Domains', summary: 'Get a domain: its verification status, each record with what the last check found (missing, mismatch and what was there, temporary_failure)' }),
  route('domains.domain.delete', { method: 'delete', path: '/api/v1/domains/{id}', auth: 'tenant', params: domainId, status: 204, tag: 'Domains', summary: 'Delete a domain and its DKIM key; 409 naming the inboxes that still use it (delete them first)' }),
  route('domains.domain.verify', { method: 'post', path: '/api/v1/domains/{id}/verify', auth: 'tenant', params: domainId, tag: 'Domains', summary: 'Check the domain\'s DNS records now and answer its new state: verified once SPF and DKIM check out (domain.verified is emitted the first time), failed when a verified domain\'s required record broke; a DNS timeout is temporary_failure and changes no state' }),
  route('domains.domain.zoneFile', { method: 'get', path: '/api/v1/domains/{id}/zone-file', auth: 'tenant', params: domainId, textResponse: true, tag: 'Domains', summary: 'The domain\'s records as a BIND zone fragment (text/plain), fully qualified names, ready for the zone or the DNS host' }),
  // Metrics (issue 27): read from the metrics service's hourly rollups of the events; ranges in whole UTC hours.
  route('metrics.activity.get', { method: 'get', path: '/api/v1/metrics/activity', auth: 'tenant', query: metricsQuery, tag: 'Metrics', summary: 'Email activity of the environment in hourly buckets (UTC): received, sent, delivered, bounced hard and soft, complained, rejected by reason. from (rounded down to its hour) and to (rounded up) default to the last 24 hours, the current hour included; at most 31 days; a range reversed or starting in the future is a 400. Every hour of the range is there, with zeros when nothing happened. inbox_id: one inbox (404 for an inbox with no activity recorded in this environment); domain_id: the inboxes on one custom domain (404 likewise; with inbox_id, the inbox must be on it, else 400)' }),
  route('metrics.summary.get', { method: 'get', path: '/api/v1/metrics/summary', auth: 'tenant', query: metricsQuery, tag: 'Metrics', summary: 'Email counts of the environment for a range (default this calendar month so far, UTC; at most 31 days), and the same counts for the period of the same length just before, for comparison. Filters and rules as activity' }),
  route('metrics.deliverability.get', { method: 'get', path: '/api/v1/metrics/deliverability', auth: 'tenant', query: metricsQuery, tag: 'Metrics', summary: 'Deliverability of a window (default the last 30 days; at most 31): delivery, hard and soft bounce, complaint and rejection rates, p50/p95 delivery latency from a histogram, a score 0-100 (formula in the README), and warnings when the complaint rate is above 0.1% or the hard-bounce rate above 2% (configurable), naming the inboxes that contribute most' }),
  route('domains.domain.setCatchAll', { method: 'patch', path: '/api/v1/domains/{id}/catch-all', auth: 'tenant', params: domainId, body: catchAllBody, tag: 'Domains', summary: 'Send mail to unknown addresses of the domain to one inbox ({inbox_id}: an inbox on this domain, in this environment; another domain\'s inbox is a 422, an inbox not here a 404), or refuse it at RCPT again ({inbox_id: null}). One catch-all per name: another environment\'s domain of the same name holding one is a 409. Answers the domain' }),
  // DKIM key rotation (issue 25, part 7).
  route('domains.domain.rotateDkim', { method: 'post', path: '/api/v1/domains/{id}/dkim/rotate', auth: 'tenant', params: domainId, tag: 'Domains', summary: 'Make a new DKIM key pair with a new selector beside the current one: the domain\'s records then list its TXT record as `dkim_next` (pending). The current key keeps signing until a check (verify or the job) finds the new record; from then the new key signs and the old record may be removed. 409 while a rotation is pending (publish its record first)' }),
  // Single sign-on (issue 26): an organization's identity providers, and the OIDC login.
  route('auth.sso.create', { method: 'post', path: '/api/v1/org/sso', auth: 'user', body: ssoConfigCreateBody, status: 201, tag: 'SSO', summary: 'Configure the organization\'s identity provider (the owner only). type oidc: issuer (its metadata is discovered now: 422 saying what is wrong when it cannot be), client_id, client_secret (sealed, never answered), scopes (default openid email profile), claim_mapping (email, name). type saml: idp_metadata_xml or idp_metadata_url (read now: entity id, HTTP-Redirect SSO URL, signing certificates, one valid now; 422 saying what is wrong), attribute_mapping (email, name), want_assertions_encrypted (needs the platform\'s SP key), allow_idp_initiated; the answer\'s saml gives the SP entity id and ACS URL for the IdP. Both: default_role of members made at their first sign-in, enforced, allowed_domains (verified domains of the organization). Created inactive; at most 10' }),
  route('auth.sso.list', { method: 'get', path: '/api/v1/org/sso', auth: 'user', tag: 'SSO', summary: 'The organization\'s SSO configurations, oldest first (at most 10: one page); active marks the one sign-ins use' }),
  route('auth.sso.update', { method: 'patch', path: '/api/v1/org/sso/{configId}', auth: 'user', params: ssoConfigId, body: ssoConfigUpdateBody, tag: 'SSO', summary: 'Change a configuration (any field of its type but type; the other type\'s fields: 400); a new issuer is discovered again, new SAML metadata read again. When the provider changes (another issuer or IdP entity id) the identities linked through it are unlinked. Answers the configuration' }),
  route('auth.sso.delete', { method: 'delete', path: '/api/v1/org/sso/{configId}', auth: 'user', params: ssoConfigId, status: 204, tag: 'SSO', summary: 'Delete a configuration (the active one too: SSO is then off for the organization); its sign-in attempts and the identities linked through it go with it' }),
  route('auth.sso.test', { method: 'post', path: '/api/v1/org/sso/{configId}/test', auth: 'user', params: ssoConfigId, tag: 'SSO', summary: 'Run a round trip to the provider. OIDC: discovery and its signing keys (JWKS). SAML: the metadata fetched again (or the stored one read) and the signing certificates\' validity (a good read refreshes the stored metadata). Answers ok, or the problem: unreachable, blocked_destination (a non-public address), not_openid_issuer, issuer_mismatch, no_jwks, not_saml_metadata, no_valid_certificate, with a message' }),
  route('auth.sso.activate', { method: 'post', path: '/api/v1/org/sso/{configId}/activate', auth: 'user', params: ssoConfigId, tag: 'SSO', summary: 'Make this configuration the one sign-ins use (the previously active one is deactivated). Answers the configuration' }),
  route('auth.sso.start', { method: 'get', path: '/api/v1/auth/sso/{org_identifier}', auth: 'none', params: ssoLoginParam, browserBinding: 'start', tag: 'Auth', summary: 'Start an SSO login to an organization (org_identifier: its id, a verified domain of it or an address there) with its active configuration, in this browser (it sets the mailroom_login cookie the callback needs: login CSRF). Answers the authorization_url, the state and when the attempt expires (10 minutes). OIDC: the provider\'s authorization endpoint (authorization code with PKCE; state and nonce kept here); it sends the person back to the web app\'s SSO page (SSO_REDIRECT_URI), which posts code and state to the OIDC callback. SAML: the IdP\'s SSO URL with an AuthnRequest (HTTP-Redirect) and the state as RelayState; the IdP posts to the SAML callback. No active configuration: 404' }),
  route('auth.sso.oidcCallback', { method: 'post', path: '/api/v1/auth/sso/oidc/callback', auth: 'none', body: ssoOidcCallbackBody, browserBinding: 'callback', tag: 'Auth', summary: 'Finish an SSO login with what the provider\'s redirect carried (code, state, iss when sent): the ID token is checked (signature against the provider\'s keys, iss, aud, exp, nonce), the address must be verified by the provider (email_verified) and in the configuration\'s allowed_domains (else 403). An unknown address becomes an account and a member with the default role; a known one is linked (and made a member if it is not). Answers like login: a session in that organization (method sso). The state works once (400 invalid_state). Needs the mailroom_login cookie the start set in this browser (login CSRF; SAML: when RelayState names an attempt), else 400 invalid_state' }),
  route('auth.sso.samlCallback', { method: 'post', path: '/api/v1/auth/sso/saml/callback', auth: 'none', body: ssoSamlCallbackBody, formBody: true, browserBinding: 'callback', tag: 'Auth', summary: 'The SAML Assertion Consumer Service (HTTP-POST binding, application/x-www-form-urlencoded: SAMLResponse and RelayState). The response or its assertion must be signed by a certificate of the IdP\'s metadata; audience (the SP entity id), recipient (this URL), NotBefore/NotOnOrAfter (small clock skew) and InResponseTo (the request of the attempt RelayState names) are checked, and an assertion is taken once. Unasked (IdP-initiated) responses only when the configuration allows them. Answers like login: a session in that organization (method sso); refusals 400/403. Needs the mailroom_login cookie the start set in this browser (login CSRF; SAML: when RelayState names an attempt), else 400 invalid_state' }),
  route('auth.sso.samlMetadata', { method: 'get', path: '/api/v1/auth/sso/saml/metadata/{org_id}', auth: 'none', params: ssoSamlMetadataParam, textResponse: true, tag: 'Auth', summary: 'The organization\'s SAML service provider metadata (application/samlmetadata+xml): its entity id (this URL), the Assertion Consumer Service (POST /api/v1/auth/sso/saml/callback) and the encryption certificate when the platform has one. 404 when the organization has no SAML configuration' }),
  // Organization exports (issue 28, part 4): the archive streams from the object store, as raw messages do.
  route('admin.export.download', { method: 'get', path: '/api/v1/admin/exports/{id}/download', auth: 'admin', params: exportId, download: true, tag: 'Admin', summary: 'Download a completed export (application/zip), streamed. Not yet completed or failed: 409; expired (deleted 7 days after it finished): 410' }),
];

/**
 * What a route needs, from the one permission table (libs/contracts ROUTE_ACCESS). A route the
 * table does not name, or names for another kind of credential than the route takes, does not
 * build: no route is served without a decision on who may call it.
 */
export function accessOf(route: Route): RouteAccess {
  const access = routeAccess(route.method, route.path);
  if (access === undefined) throw new Error(`${route.method.toUpperCase()} ${route.path} is not in the permission table (libs/contracts permissions.ts ROUTE_ACCESS)`);
  const expected = access === 'public' ? ['none', 'signature'] : access === 'self' ? ['user'] : access === 'admin' ? ['admin'] : ['tenant', 'user'];
  if (!expected.includes(route.auth)) throw new Error(`${route.method.toUpperCase()} ${route.path} takes auth ${route.auth} but the permission table says ${access}`);
  return access;
}

/** The response schema of a route, for the OpenAPI document. */
export function responseSchemaOf(route: Route): z.ZodType | undefined {
  return route.op ? RPC[route.op].response : undefined;
}

/** /api/v1/keys/{id} -> /api/v1/keys/:id (express 5 syntax). */
export function expressPath(path: string): string {
  return path.replace(/\{([a-zA-Z_]+)\}/g, ':$1');
}

/** A matcher for 405 detection: same path, any method. */
export function pathPattern(path: string): RegExp {
  const escaped = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
  return new RegExp(`^${escaped.replace(/\{[a-zA-Z_]+\}/g, '[^/]+')}/?$`);
}
