/**
 * Error codes of the whole platform and the HTTP status each maps to. Domain code throws
 * AppError with one of these codes; only the edges (gateway, SMTP, NATS) translate them.
 */
export const ERROR_CODES = {
  invalid_request: { status: 400 },
  invalid_json: { status: 400 },
  /** A mailed code or link token that is wrong, used, replaced, expired or out of attempts (one answer for all). */
  invalid_code: { status: 400 },
  /** The state of an outside provider's sign-in or link that is unknown, used, expired or not this one's (one answer for all). */
  invalid_state: { status: 400 },
  unauthorized: { status: 401 },
  invalid_credentials: { status: 401 },
  token_expired: { status: 401 },
  forbidden: { status: 403 },
  /** What a person may do only once their address is verified (inviting members). */
  email_unverified: { status: 403 },
  /** One more of a resource than the organization's plan holds (contracts plans.ts). */
  plan_limit: { status: 403 },
  /** A sign-in that proved a deleted account: details carry a recovery_token and recover_before. */
  account_deleted: { status: 403 },
  /** The platform's operators suspended the account: no sign-in, its API keys do not act. */
  account_suspended: { status: 403 },
  /** A sign-in other than SSO (password, outside provider) into an organization whose active SSO configuration is enforced; the message names the SSO route. */
  sso_required: { status: 403 },
  /** A signed download link that was altered, is malformed or was signed with another key (one answer for all). */
  invalid_link: { status: 403 },
  /** A signed download link past its expiry: a new read of the message gives a new one. */
  link_expired: { status: 403 },
  not_found: { status: 404 },
  route_not_found: { status: 404 },
  method_not_allowed: { status: 405 },
  /** The request did not arrive whole within the server's time limit. */
  request_timeout: { status: 408 },
  conflict: { status: 409 },
  email_taken: { status: 409 },
  idempotency_conflict: { status: 409 },
  idempotency_in_progress: { status: 409 },
  /** A request or token that existed but has expired (an ownership transfer, an invitation). */
  expired: { status: 410 },
  payload_too_large: { status: 413 },
  unsupported_media_type: { status: 415 },
  /** An Expect header other than 100-continue. */
  expectation_failed: { status: 417 },
  unprocessable: { status: 422 },
  /** A send refused before it left: recipient on the suppression list. */
  blocked_recipient: { status: 422 },
  /** A send refused before it left: the inbox or organization is paused. */
  account_paused: { status: 422 },
  rate_limited: { status: 429 },
  /** The request line and headers are larger than the server reads. */
  headers_too_large: { status: 431 },
  internal_error: { status: 500 },
  not_implemented: { status: 501 },
  service_unavailable: { status: 503 },
  gateway_timeout: { status: 504 },
} as const satisfies Record<string, { status: number }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CODES, value);
}

export function httpStatusOf(code: ErrorCode): number {
  return ERROR_CODES[code].status;
}

export interface ErrorDetail {
  path: string;
  message: string;
}

export interface AppErrorOptions {
  details?: ErrorDetail[];
  /** Whether retrying the same operation later may succeed. */
  retryable?: boolean;
  /** When a refusal for rate ends, in whole seconds from now: the answer's Retry-After. */
  retryAfterSeconds?: number;
  cause?: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetail[] | undefined;
  readonly retryable: boolean;
  readonly retryAfterSeconds: number | undefined;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.details = options.details;
    this.retryable = options.retryable ?? (code === 'service_unavailable' || code === 'gateway_timeout');
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  get status(): number {
    return httpStatusOf(this.code);
  }

  static notFound(what: string): AppError {
    return new AppError('not_found', `${what} not found`);
  }
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
