/** Header names and error body of the RPC convention on NATS, shared by both ends. */
import { z } from 'zod';
import { isErrorCode, type ErrorCode } from './errors';

export const HEADERS = {
  requestId: 'Mr-Request-Id',
  auth: 'Mr-Auth',
  /** The gateway's signature of `Mr-Auth` on this subject (libs/messaging context-seal.ts). */
  authSeal: 'Mr-Auth-Seal',
  traceparent: 'traceparent',
  tracestate: 'tracestate',
  clientIp: 'Mr-Client-Ip',
  userAgent: 'Mr-User-Agent',
  /**
   * The gateway's key of a request's Idempotency-Key (hex SHA-256 of the caller and the key):
   * the same on every try, so a service can make a retried write once (mailbox sends).
   */
  requestKey: 'Mr-Request-Key',
  /** NATS micro-services convention for failed requests. */
  errorCode: 'Nats-Service-Error-Code',
  error: 'Nats-Service-Error',
  /** A reply too large for one NATS message: its body is this object of the replies bucket. */
  replyObject: 'Mr-Reply-Object',
  /** HMAC of a stored message (event, fact, work item) under its subject's key: from its one publisher. */
  storedSeal: 'Mr-Stored-Seal',
  /** Its key (AES-256-GCM key, IV and tag): the object is sealed in the bucket, which other services can read. */
  replyKey: 'Mr-Reply-Key',
} as const;

export const rpcErrorBody = z.object({
  code: z.string().refine(isErrorCode, 'unknown error code').transform((c) => c as ErrorCode),
  message: z.string(),
  details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  retryable: z.boolean().optional(),
  retry_after_seconds: z.number().int().min(0).max(86_400).optional(),
});
export type RpcErrorBody = z.infer<typeof rpcErrorBody>;
