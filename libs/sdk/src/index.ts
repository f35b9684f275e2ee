/** @mailroom/sdk: the typed client of the Mailroom API, and webhook verification. */
export { MailroomError, type ErrorDetail } from './errors';
export { verifyWebhook, WebhookVerificationError, type WebhookEvent, type VerifyOptions } from './webhook';
export { retryingFetch, type RetryOptions } from './retry';
