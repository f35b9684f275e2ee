/** The API's error shape as an exception: every failed call throws a MailroomError. */

export interface ErrorDetail {
  path?: string;
  message?: string;
}

export class MailroomError extends Error {
  /** HTTP status; 0 when no answer came (network failure). */
  readonly status: number;
  /** The API's stable snake_case code (`not_found`, `rate_limited`, ...); `network_error` when no answer came. */
  readonly code: string;
  readonly requestId: string | undefined;
  readonly details: ErrorDetail[];
  /** Seconds the API asked to wait (Retry-After), when it did. */
  readonly retryAfter: number | undefined;

  constructor(init: { status: number; code: string; message: string; requestId?: string | undefined; details?: ErrorDetail[]; retryAfter?: number | undefined; cause?: unknown }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'MailroomError';
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.details = init.details ?? [];
    this.retryAfter = init.retryAfter;
  }
}

/** Retry-After in seconds (delta-seconds or an HTTP date), or undefined. */
export function retryAfterSeconds(value: string | null, nowMs: number): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - nowMs) / 1000));
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The error a failed answer (its parsed body) or a failed request (no response) stands for. */
export function toMailroomError(body: unknown, response: Response | undefined, nowMs = Date.now()): MailroomError {
  if (!response) {
    if (body instanceof MailroomError) return body;
    return new MailroomError({ status: 0, code: 'network_error', message: `no answer from the API: ${body instanceof Error ? body.message : String(body)}`, cause: body });
  }
  const error = isRecord(body) && isRecord(body.error) ? body.error : undefined;
  const details = Array.isArray(error?.details) ? error.details.filter(isRecord).map((d) => ({ path: typeof d.path === 'string' ? d.path : undefined, message: typeof d.message === 'string' ? d.message : undefined })) : [];
  return new MailroomError({
    status: response.status,
    code: typeof error?.code === 'string' ? error.code : `http_${response.status}`,
    message: typeof error?.message === 'string' ? error.message : `HTTP ${response.status} ${response.statusText}`.trim(),
    requestId: typeof error?.request_id === 'string' ? error.request_id : (response.headers.get('x-request-id') ?? undefined),
    details,
    retryAfter: retryAfterSeconds(response.headers.get('retry-after'), nowMs),
  });
}
