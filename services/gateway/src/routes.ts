/**
 * The route table: the one description of the HTTP surface. The router and the OpenAPI
 * document are both built from it, so what is documented is what is served.
 */
import { z } from 'zod';
import {
  RPC,
  apiKeyCreateRequest,
  idSchema,
  inboxCreateRequest,
  inboxUpdateRequest,
  labelBatchRequest,
  labelsBody,
  loginRequest,
  messageListRequest,
  organizationUpdateRequest,
  pageQuery,
  refreshRequest,
  signupRequest,
  forwardRequest,
  replyAllRequest,
  replyRequest,
  sendRequest,
  suppressionAddress,
  suppressionCreateRequest,
  threadListRequest,
  webhookEndpointCreateRequest,
  webhookEndpointId,
  webhookEndpointUpdateBody,
  webhookRecoverBody,
  webhookRecoveryParams,
  webhookRedeliverParams,
  type RpcName,
} from '@mailroom/contracts';

/**
 * none: no credential (session-starting auth routes);
 * tenant: an API key or a user access token, acting in one org and environment;
 * user: a user access token only;
 * admin: an admin key;
 * signature: no credential, no per-address limit: the body is signed by its sender (a mail
 * provider's notification) and the service checks the signature.
 */
export type AuthMode = 'none' | 'tenant' | 'user' | 'admin' | 'signature';
export type Method = 'get' | 'post' | 'patch' | 'put' | 'delete';

export interface Route {
  method: Method;
  /** OpenAPI style: /api/v1/keys/{id}. */
  path: string;
  auth: AuthMode;
  summary: string;
  tag: string;
  /** The operation that answers; absent = not built yet (501). */
  op?: RpcName;
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  status?: 200 | 201 | 202 | 204;
  /** Honours Idempotency-Key. */
  idempotent?: boolean;
  /** Also served at these paths (the spec's /admin aliases). */
  aliases?: string[];
  /** On success the caller's session is over: this gateway denies it at once, others on the revocation fact. */
  endsSession?: boolean;
  /** The operation names a stored object; the gateway streams it (raw message, attachment). */
  download?: boolean;
  /** The body is passed on as text, whatever its Content-Type, as `body` (a signed payload). */
  textBody?: boolean;
}

const keyId = z.object({ id: idSchema('apiKey') });
const inboxId = z.object({ id: idSchema('inbox') });
const inboxParam = z.object({ inbox_id: idSchema('inbox') });
const messageParams = inboxParam.extend({ message_id: idSchema('message') });
const threadParams = inboxParam.extend({ thread_id: idSchema('thread') });
const messageId = z.object({ id: idSchema('message') });
const threadId = z.object({ id: idSchema('thread') });

function notYet(method: Method, path: string, summary: string, tag: string, aliases?: string[]): Route {
  return { method, path, auth: 'admin', summary, tag, ...(aliases ? { aliases } : {}) };
}

export const ROUTES: Route[] = [
  { method: 'post', path: '/api/v1/auth/signup', auth: 'none', op: 'auth.user.signup', body: signupRequest, status: 201, tag: 'Auth', summary: 'Create a user account and its organization; returns tokens' },
  { method: 'post', path: '/api/v1/auth/login', auth: 'none', op: 'auth.user.login', body: loginRequest, tag: 'Auth', summary: 'Log in with email and password' },
  { method: 'post', path: '/api/v1/auth/refresh', auth: 'none', op: 'auth.token.refresh', body: refreshRequest, tag: 'Auth', summary: 'Exchange a refresh token for a new token pair (rotating; reuse revokes the session)' },
  { method: 'post', path: '/api/v1/auth/logout', auth: 'user', op: 'auth.session.logout', status: 204, endsSession: true, tag: 'Auth', summary: 'Log out and revoke the current session' },
  { method: 'get', path: '/api/v1/user/me', auth: 'user', op: 'auth.user.me', tag: 'User', summary: 'Get the current user profile' },
  { method: 'post', path: '/api/v1/keys', auth: 'tenant', op: 'auth.apikey.create', body: apiKeyCreateRequest, status: 201, idempotent: true, tag: 'API keys', summary: 'Create an API key (the secret is in this answer only)' },
  { method: 'get', path: '/api/v1/keys', auth: 'tenant', op: 'auth.apikey.list', query: pageQuery, tag: 'API keys', summary: 'List API keys of the organization, newest first' },
  { method: 'get', path: '/api/v1/keys/{id}', auth: 'tenant', op: 'auth.apikey.get', params: keyId, tag: 'API keys', summary: 'Get an API key (without its secret)' },
  { method: 'delete', path: '/api/v1/keys/{id}', auth: 'tenant', op: 'auth.apikey.delete', params: keyId, status: 204, tag: 'API keys', summary: 'Revoke an API key; requests with it fail within a second' },
  { method: 'get', path: '/api/v1/org', auth: 'tenant', op: 'orgs.organization.get', tag: 'Organization', summary: 'Get the organization the credential acts in' },
  { method: 'patch', path: '/api/v1/org', auth: 'tenant', op: 'orgs.organization.update', body: organizationUpdateRequest, tag: 'Organization', summary: 'Rename the organization, or pause its sending (status: paused; every send is refused with account_paused, mail still arrives) and resume it. Owners and admins signed in only' },
  { method: 'post', path: '/api/v1/inboxes', auth: 'tenant', op: 'mailbox.inbox.create', body: inboxCreateRequest, status: 201, idempotent: true, tag: 'Inboxes', summary: 'Create an inbox (username generated when absent; domain defaults to MAIL_DOMAIN)' },
  { method: 'get', path: '/api/v1/inboxes', auth: 'tenant', op: 'mailbox.inbox.list', query: pageQuery, tag: 'Inboxes', summary: 'List inboxes, newest first' },
  { method: 'get', path: '/api/v1/inboxes/{id}', auth: 'tenant', op: 'mailbox.inbox.get', params: inboxId, tag: 'Inboxes', summary: 'Get an inbox' },
  { method: 'patch', path: '/api/v1/inboxes/{id}', auth: 'tenant', op: 'mailbox.inbox.update', params: inboxId, body: inboxUpdateRequest, tag: 'Inboxes', summary: 'Update display_name, or pause (status: paused: mail still arrives, sending is refused)' },
  { method: 'delete', path: '/api/v1/inboxes/{id}', auth: 'tenant', op: 'mailbox.inbox.delete', params: inboxId, status: 204, tag: 'Inboxes', summary: 'Delete an inbox; mail to it is refused from then on' },
  { method: 'post', path: '/api/v1/inboxes/{id}/resume', auth: 'tenant', op: 'mailbox.inbox.resume', params: inboxId, tag: 'Inboxes', summary: 'Resume a paused inbox' },
  { method: 'get', path: '/api/v1/inboxes/{inbox_id}/messages', auth: 'tenant', op: 'mailbox.message.list', params: inboxParam, query: messageListRequest.omit({ inbox_id: true }), tag: 'Messages', summary: 'List messages of an inbox, newest first (filters: label, before, after)' },
  { method: 'get', path: '/api/v1/inboxes/{inbox_id}/messages/{message_id}', auth: 'tenant', op: 'mailbox.message.get', params: messageParams, tag: 'Messages', summary: 'Get a message' },
  { method: 'get', path: '/api/v1/inboxes/{inbox_id}/messages/{message_id}/raw', auth: 'tenant', op: 'mailbox.message.raw', params: messageParams, download: true, tag: 'Messages', summary: 'Download the raw message (message/rfc822), byte for byte as received' },
  { method: 'get', path: '/api/v1/inboxes/{inbox_id}/messages/{message_id}/attachments/{attachment_id}', auth: 'tenant', op: 'mailbox.attachment.get', params: messageParams.extend({ attachment_id: idSchema('attachment') }), download: true, tag: 'Messages', summary: 'Download an attachment' },
  { method: 'post', path: '/api/v1/inboxes/{inbox_id}/messages/{message_id}/reply', auth: 'tenant', op: 'mailbox.message.reply', params: messageParams, body: replyRequest, idempotent: true, tag: 'Messages', summary: 'Reply to a message: stored in its thread at once, sent asynchronously (message.sent, then delivered/bounced). Refused sends answer blocked_recipient, rate_limited or account_paused, and emit message.rejected' },
  { method: 'post', path: '/api/v1/inboxes/{inbox_id}/messages/{message_id}/reply-all', auth: 'tenant', op: 'mailbox.message.replyAll', params: messageParams, body: replyAllRequest, idempotent: true, tag: 'Messages', summary: 'Reply to the sender and every other recipient (To and Cc of the original, less the inbox itself) in Cc; like reply otherwise' },
  { method: 'post', path: '/api/v1/inboxes/{inbox_id}/messages/{message_id}/forward', auth: 'tenant', op: 'mailbox.message.forward', params: messageParams, body: forwardRequest, idempotent: true, tag: 'Messages', summary: 'Forward a message with its attachments, its text quoted under a "Forwarded message" header; stored in the same thread' },
  { method: 'post', path: '/api/v1/inboxes/{inbox_id}/messages/send', auth: 'tenant', op: 'mailbox.message.send', params: inboxParam, body: sendRequest, idempotent: true, tag: 'Messages', summary: 'Send a new message (new thread): to, cc, bcc (50 recipients in all), subject, text_body and/or html_body, attachments (base64, 512 KiB in all, else 413), custom X- headers' },
  { method: 'get', path: '/api/v1/suppressions', auth: 'tenant', op: 'send.suppression.list', query: pageQuery, tag: 'Suppressions', summary: 'Addresses mail is not sent to (hard bounces, complaints, added by hand), newest first' },
  { method: 'post', path: '/api/v1/suppressions', auth: 'tenant', op: 'send.suppression.add', body: suppressionCreateRequest, status: 201, tag: 'Suppressions', summary: 'Add an address to the suppression list' },
  { method: 'delete', path: '/api/v1/suppressions/{address}', auth: 'tenant', op: 'send.suppression.delete', params: suppressionAddress, status: 204, tag: 'Suppressions', summary: 'Remove an address from the suppression list: mail to it is sent again' },
  { method: 'get', path: '/api/v1/inboxes/{inbox_id}/threads', auth: 'tenant', op: 'mailbox.thread.list', params: inboxParam, query: threadListRequest.omit({ inbox_id: true }), tag: 'Threads', summary: 'List threads of an inbox, most recent activity first' },
  { method: 'get', path: '/api/v1/inboxes/{inbox_id}/threads/{thread_id}', auth: 'tenant', op: 'mailbox.thread.get', params: threadParams, tag: 'Threads', summary: 'Get a thread with its messages, oldest first' },
  { method: 'post', path: '/api/v1/messages/{id}/labels', auth: 'tenant', op: 'mailbox.label.addToMessage', params: messageId, body: labelsBody, tag: 'Labels', summary: 'Add labels to a message' },
  { method: 'delete', path: '/api/v1/messages/{id}/labels', auth: 'tenant', op: 'mailbox.label.removeFromMessage', params: messageId, body: labelsBody, tag: 'Labels', summary: 'Remove labels from a message (system labels cannot be removed)' },
  { method: 'post', path: '/api/v1/threads/{id}/labels', auth: 'tenant', op: 'mailbox.label.addToThread', params: threadId, body: labelsBody, tag: 'Labels', summary: 'Add labels to every message of a thread' },
  { method: 'delete', path: '/api/v1/threads/{id}/labels', auth: 'tenant', op: 'mailbox.label.removeFromThread', params: threadId, body: labelsBody, tag: 'Labels', summary: 'Remove labels from every message of a thread' },
  { method: 'post', path: '/api/v1/labels/batch', auth: 'tenant', op: 'mailbox.label.batch', body: labelBatchRequest, tag: 'Labels', summary: 'Add and remove labels on up to 100 messages at once' },
  { method: 'get', path: '/api/v1/labels', auth: 'tenant', op: 'mailbox.label.list', query: pageQuery, tag: 'Labels', summary: 'Labels in use, with message counts, by name' },
  { method: 'post', path: '/api/v1/providers/ses/notifications', auth: 'signature', op: 'send.ses.notification', textBody: true, status: 204, tag: 'Providers', summary: 'Amazon SNS endpoint for SES notifications (delivery, bounce, complaint): subscribe it to the configured topics. The SNS signature is verified and the topic must be one of SES_SNS_TOPIC_ARNS; each notification is applied once' },
  // Webhooks: endpoints and delivery records of the environment the credential acts in.
  { method: 'post', path: '/api/v1/webhooks/endpoints', auth: 'tenant', op: 'webhooks.endpoint.create', body: webhookEndpointCreateRequest, status: 201, idempotent: true, tag: 'Webhooks', summary: 'Create a webhook endpoint; events omitted = every event type, including types added later. The secret (whsec_...) is in this answer only' },
  { method: 'get', path: '/api/v1/webhooks/endpoints', auth: 'tenant', op: 'webhooks.endpoint.list', query: pageQuery, tag: 'Webhooks', summary: 'List webhook endpoints, newest first (without secrets)' },
  { method: 'get', path: '/api/v1/webhooks/endpoints/{id}', auth: 'tenant', op: 'webhooks.endpoint.get', params: webhookEndpointId, tag: 'Webhooks', summary: 'Get a webhook endpoint (without its secret)' },
  { method: 'patch', path: '/api/v1/webhooks/endpoints/{id}', auth: 'tenant', op: 'webhooks.endpoint.update', params: webhookEndpointId, body: webhookEndpointUpdateBody, tag: 'Webhooks', summary: 'Update url, events or description; disabled: false re-enables and resets the failure count' },
  { method: 'delete', path: '/api/v1/webhooks/endpoints/{id}', auth: 'tenant', op: 'webhooks.endpoint.delete', params: webhookEndpointId, status: 204, tag: 'Webhooks', summary: 'Delete a webhook endpoint and its delivery records' },
  { method: 'get', path: '/api/v1/webhooks/endpoints/{id}/deliveries', auth: 'tenant', op: 'webhooks.delivery.list', params: webhookEndpointId, query: pageQuery, tag: 'Webhooks', summary: 'Delivery records of an endpoint, one per attempt, newest first' },
  { method: 'post', path: '/api/v1/webhooks/endpoints/{id}/deliveries/{delivery_id}/redeliver', auth: 'tenant', op: 'webhooks.delivery.redeliver', params: webhookRedeliverParams, status: 202, tag: 'Webhooks', summary: 'Send the event of a delivery again, once (same event id and body); 409 on a disabled endpoint' },
  { method: 'post', path: '/api/v1/webhooks/endpoints/{id}/recover', auth: 'tenant', op: 'webhooks.endpoint.recover', params: webhookEndpointId, body: webhookRecoverBody, status: 202, tag: 'Webhooks', summary: 'Start a recovery: the events of [since, until) (at most 14 days) without a successful delivery to this endpoint are sent again. It runs in the background (follow it at the recovery\'s URL); 409 while one runs for the endpoint' },
  { method: 'get', path: '/api/v1/webhooks/endpoints/{id}/recoveries/{recovery_id}', auth: 'tenant', op: 'webhooks.recovery.get', params: webhookRecoveryParams, tag: 'Webhooks', summary: 'A recovery of an endpoint: running, finished or failed, and how many events it queued' },
  // Admin operations: wired with their aliases, answered when the admin service lands.
  notYet('post', '/api/v1/admin/keys', 'Create an admin key', 'Admin'),
  notYet('get', '/api/v1/admin/keys', 'List admin keys', 'Admin'),
  notYet('get', '/api/v1/admin/keys/{id}', 'Get an admin key', 'Admin'),
  notYet('delete', '/api/v1/admin/keys/{id}', 'Revoke an admin key', 'Admin'),
  notYet('get', '/api/v1/admin/health', 'Platform health', 'Admin', ['/admin/health']),
  notYet('get', '/api/v1/admin/health/history', 'Platform health history', 'Admin', ['/admin/health/history']),
  notYet('get', '/api/v1/admin/alerts', 'List alerts', 'Admin', ['/admin/alerts']),
  notYet('patch', '/api/v1/admin/alerts/{key}', 'Update an alert', 'Admin', ['/admin/alerts/{key}']),
  notYet('post', '/api/v1/admin/orgs/{id}/export', 'Export an organization', 'Admin'),
  notYet('get', '/api/v1/admin/exports', 'List exports', 'Admin'),
  notYet('get', '/api/v1/admin/exports/{id}', 'Get an export', 'Admin'),
];

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
