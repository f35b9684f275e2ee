/**
 * A failed tool call as a model can act on it: the API's error code, its message, a one-line
 * fix, and the request id and details when the API gave them. Tool errors are results with
 * isError (the MCP way), never protocol errors, so the model reads them.
 */
import { fixFor } from './fixes';

export interface ToolError {
  code: string;
  message: string;
  fix: string;
  status?: number;
  request_id?: string;
  details?: { path?: string | undefined; message?: string | undefined }[];
  retry_after?: number;
}

interface ErrorLike {
  status?: unknown;
  code?: unknown;
  message?: unknown;
  requestId?: unknown;
  details?: unknown;
  retryAfter?: unknown;
}

/** Any thrown value as a ToolError: a MailroomError keeps what the API said. */
export function toToolError(err: unknown): ToolError {
  const e = (typeof err === 'object' && err !== null ? err : {}) as ErrorLike;
  const code = typeof e.code === 'string' ? e.code : 'internal_error';
  const status = typeof e.status === 'number' ? e.status : undefined;
  const out: ToolError = {
    code,
    message: typeof e.message === 'string' && e.message !== '' ? e.message : String(err),
    fix: fixFor(code, status),
  };
  if (status !== undefined) out.status = status;
  if (typeof e.requestId === 'string') out.request_id = e.requestId;
  if (Array.isArray(e.details) && e.details.length) out.details = e.details as ToolError['details'];
  if (typeof e.retryAfter === 'number') out.retry_after = e.retryAfter;
  return out;
}
