/** @mailroom/sdk: the typed client of the Mailroom API, and webhook verification. */
export { Mailroom, type MailroomOptions, type CallOptions, type Page } from './client';
export { MailroomError, type ErrorDetail } from './errors';
export { verifyWebhook, WebhookVerificationError, type WebhookEvent, type VerifyOptions } from './webhook';
export { retryingFetch, type RetryOptions } from './retry';
export { OPERATIONS, type OperationInfo, type OperationParameter, type JsonSchema } from './generated/operations.gen';
export * from './generated/types.gen';
