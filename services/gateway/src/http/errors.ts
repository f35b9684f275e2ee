/** The one error shape of the API, and the mapping of everything that can fail to it. */
import type { Response } from 'express';
import { AppError, httpStatusOf, type ErrorDetail } from '@mailroom/contracts';

export interface ErrorBody {
  error: { code: string; message: string; request_id: string; details?: ErrorDetail[] };
}

export function errorBody(err: AppError, requestId: string): ErrorBody {
  return {
    error: {
      code: err.code,
      message: err.message,
      request_id: requestId,
      ...(err.details?.length ? { details: err.details } : {}),
    },
  };
}

export function sendError(res: Response, err: AppError, requestId: string): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  // A refusal that ends at a known time says when (the gateway's limits, a send over its rate).
  if (err.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(err.retryAfterSeconds));
  res.status(httpStatusOf(err.code)).json(errorBody(err, requestId));
}

/** The `type` of the error a body parser's verify hook throws for a body that is not UTF-8. */
export const BODY_NOT_UTF8 = 'entity.verify.utf8';

/** body-parser and other middleware errors carry `type` and `status`; everything else is ours or a bug. */
export function fromMiddlewareError(err: unknown, limitBytes: number): AppError {
  if (err instanceof AppError) return err;
  const e = err as { type?: unknown; status?: unknown } | undefined;
  switch (e?.type) {
    case 'entity.too.large':
      return new AppError('payload_too_large', `request body is larger than the limit of ${limitBytes} bytes`);
    case 'entity.parse.failed':
      return new AppError('invalid_json', 'request body is not valid JSON');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError('unsupported_media_type', 'request body must be UTF-8 JSON');
    case BODY_NOT_UTF8:
      return new AppError('invalid_request', 'request body is not valid UTF-8 (a stray, overlong or surrogate byte sequence)');
    case 'request.aborted':
      return new AppError('invalid_request', 'request was aborted by the client');
    case 'request.size.invalid':
      return new AppError('invalid_request', 'request body length does not match Content-Length');
    default:
      if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) {
        return new AppError('invalid_request', 'request could not be read');
      }
      return new AppError('internal_error', 'internal error', { cause: err });
  }
}
