/**
 * What a model should do about each of the API's error codes: one line it can act on. The
 * table is keyed by the contracts' ErrorCode, so a new code without a fix does not compile.
 */
import type { ErrorCode } from '@mailroom/contracts';

export const FIXES: Record<ErrorCode, string> = {
  invalid_request: 'Correct the arguments the message and details name (see the tool input schema), then call again.',
  invalid_json: 'Send the body as valid JSON.',
  invalid_code: 'Ask the person for a new code or link; this one is wrong, used or expired.',
  invalid_state: 'Start the sign-in or link again from the beginning.',
  unauthorized: 'Set a valid API key: MAILROOM_API_KEY (stdio) or the Authorization: Bearer header (HTTP).',
  invalid_credentials: 'Check the email and password, or use an API key instead.',
  token_expired: 'The credential has expired: create a new API key (or sign in again) and restart with it.',
  forbidden: 'This API key lacks the permission: use a key whose scope includes it, or ask an admin.',
  email_unverified: "Verify the account's email address first (the verification mail's code).",
  plan_limit: "The organization's plan holds no more of these: delete one, or ask the owner to upgrade.",
  account_deleted: 'The account is deleted: recover it with the recovery token in details, or use another account.',
  account_suspended: "The account is suspended by the platform's operators: contact support; retrying will not help.",
  sso_required: 'This organization signs in through SSO only: use the SSO route named in the message.',
  invalid_link: 'The download link was altered or cut: read the message again (get_message) for a fresh download_url.',
  link_expired: 'The download link has expired: read the message again (get_message) for a fresh download_url.',
  not_found: 'Check the id: list the resources (for example list_inboxes, list_messages) to find a valid one.',
  route_not_found: 'This operation does not exist on this server: check MAILROOM_BASE_URL and the API version.',
  method_not_allowed: 'This operation does not exist on this server: check MAILROOM_BASE_URL and the API version.',
  request_timeout: 'The request did not arrive whole in time: call again.',
  conflict: 'The resource is not in a state that allows this: get it again, then decide.',
  email_taken: 'That address is already used: choose another one.',
  idempotency_conflict: 'This idempotency_key was used with other arguments: use a new key for a new request.',
  idempotency_in_progress: 'The first request with this idempotency_key is still running: wait a few seconds and call again with the same key.',
  expired: 'It has expired: create a new one.',
  payload_too_large: 'Make it smaller (shorter body, fewer or smaller attachments).',
  unsupported_media_type: 'Send the body as JSON.',
  expectation_failed: 'Send the request without an Expect header.',
  unprocessable: 'The arguments are valid but cannot be carried out: read the message and change the request.',
  blocked_recipient: 'A recipient is on the suppression list (bounced, complained or unsubscribed): remove that recipient, or delete the suppression if you are sure.',
  account_paused: 'The inbox or organization is paused: resume the inbox with resume_inbox, or ask an admin about the organization.',
  rate_limited: 'Too many requests: wait retry_after seconds, then call again (with the same idempotency_key for a send).',
  headers_too_large: 'Send fewer or smaller headers.',
  internal_error: 'A server error: call again later; if it persists, report the request_id.',
  not_implemented: 'This server does not implement the operation yet.',
  service_unavailable: 'A service is unavailable: wait a few seconds and call again (the same idempotency_key for a send).',
  gateway_timeout: 'A service did not answer in time: call again (the same idempotency_key for a send, so it is not sent twice).',
};

/** Codes the SDK gives when no API answer stands behind the error. */
const CLIENT_FIXES: Record<string, string> = {
  network_error: 'The Mailroom API did not answer: check MAILROOM_BASE_URL and that the server runs, then call again.',
  invalid_arguments: 'Correct the arguments as the message says (see the tool input schema), then call again.',
  unknown_tool: 'Call tools/list and use one of the tools it names.',
};

export function fixFor(code: string, status?: number): string {
  if (Object.hasOwn(FIXES, code)) return FIXES[code as ErrorCode];
  if (Object.hasOwn(CLIENT_FIXES, code)) return CLIENT_FIXES[code]!;
  if (status !== undefined && status >= 500) return FIXES.internal_error;
  return 'Read the message, change the request accordingly, and call again.';
}
