/**
 * The HTTP client of deliveries (undici). One deadline (30 s by default) covers connect,
 * TLS, the request and the response head; redirects are never followed (a 3xx is a
 * failure); the response body is read up to 64 KB and its first 4 KB are kept.
 *
 * SSRF guard: the platform's, at connect time (libs/platform guarded-connect.ts): every new
 * connection is checked on the address it connects to, so a refused destination makes no
 * connection at all, and DNS rebinding between a check and the connect is impossible.
 */
import { guardedConnector, type IpPolicy, type Resolver } from '@mailroom/platform';
import { Agent, type Dispatcher } from 'undici';

export const RESPONSE_READ_LIMIT = 64 * 1024;
export const RESPONSE_KEEP_LIMIT = 4 * 1024;

export type DeliveryError =
  | 'timeout'
  | 'blocked_destination'
  | 'dns_failure'
  | 'connection_refused'
  | 'connection_reset'
  | 'connection_failed'
  | 'tls_failure'
  | 'redirect_not_followed'
  | 'non_2xx_status'
  | 'internal_error'
  | 'aborted';

export interface PostResult {
  ok: boolean;
  /** 0 when there was no HTTP answer. */
  httpStatus: number;
  error?: DeliveryError;
  timedOut: boolean;
  durationMs: number;
  responseBody?: string;
  retryAfter?: string;
}

export interface HttpClientOptions {
  ips: IpPolicy;
  /** The one deadline of an attempt. */
  timeoutMs: number;
  /** How names are resolved (the system's by default; tests give their own). */
  resolver?: Resolver;
  userAgent?: string;
}

/**
 * The kept response body as text that PostgreSQL stores: invalid UTF-8 becomes U+FFFD (as
 * toString does), and so does NUL, which a text column refuses (and with it the whole
 * batch of records it came in).
 */
export function keptText(bytes: Buffer): string {
  return bytes.toString('utf8').replaceAll('\u0000', '\ufffd');
}

function codeOf(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    if (typeof e === 'object' && 'code' in e && typeof e.code === 'string' && e.code !== 'UND_ERR_SOCKET' && e.code !== 'ABORT_ERR') return e.code;
    if (e instanceof AggregateError && e.errors.length) e = e.errors[0];
    else e = typeof e === 'object' && e !== null && 'cause' in e ? e.cause : undefined;
  }
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

export function classifyError(err: unknown): DeliveryError {
  const code = codeOf(err) ?? '';
  if (code === 'E_BLOCKED_DESTINATION') return 'blocked_destination';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NODATA' || code === 'EAI_FAIL') return 'dns_failure';
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_CLOSED') return 'connection_reset';
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'ETIMEDOUT') return 'timeout';
  if (code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL') || code.includes('CERT') || code === 'DEPTH_ZERO_SELF_SIGNED_CERT' || code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE') return 'tls_failure';
  return 'connection_failed';
}

interface Target {
  origin: string;
  path: string;
}

export class WebhookHttpClient {
  private readonly agent: Agent;
  private readonly targets = new Map<string, Target>();
  private readonly timeoutMs: number;
  private readonly userAgent: string;

  constructor(opts: HttpClientOptions) {
    this.timeoutMs = opts.timeoutMs;
    this.userAgent = opts.userAgent ?? 'Mailroom-Webhooks/1.0';
    this.agent = new Agent({
      connect: guardedConnector(opts.ips, { timeoutMs: opts.timeoutMs, ...(opts.resolver ? { resolver: opts.resolver } : {}) }),
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
      keepAliveTimeout: 4_000,
      pipelining: 1,
      allowH2: false,
    });
  }

  /**
   * POSTs `body`; never throws. `abort` ends the attempt early (shutdown).
   *
   * Through undici's handler API (`dispatch`), not `request()`: no response stream, no
   * AbortSignal and no async resource per attempt. In bench:webhooks that is about a third
   * of the client's CPU per request.
   */
  post(url: string, body: Buffer, headers: Record<string, string>, abort?: AbortSignal): Promise<PostResult> {
    const started = performance.now();
    const duration = () => Math.max(0, Math.round(performance.now() - started));
    return new Promise<PostResult>((resolve) => {
      let settled = false;
      let controller: { abort(reason: Error): void } | undefined;
      let cancelled: Error | undefined;
      let status = 0;
      let retryAfter: string | undefined;
      const kept: Buffer[] = [];
      let keptBytes = 0;
      let read = 0;
      const settle = (result: PostResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        abort?.removeEventListener('abort', onAbort);
        resolve(result);
      };
      const fail = (error: DeliveryError) => settle({ ok: false, httpStatus: 0, error, timedOut: error === 'timeout', durationMs: duration() });
      const answered = () => {
        const ok = status >= 200 && status < 300;
        const text = keptBytes ? keptText(Buffer.concat(kept)) : undefined;
        settle({
          ok,
          httpStatus: status,
          ...(ok ? {} : { error: status >= 300 && status < 400 ? 'redirect_not_followed' : 'non_2xx_status' }),
          timedOut: false,
          durationMs: duration(),
          ...(text ? { responseBody: text } : {}),
          ...(retryAfter !== undefined ? { retryAfter } : {}),
        });
      };
      // Ends the attempt now; the request, if it has started, is aborted (its connection closed).
      // Once the status line is in, the verdict is the status, whatever becomes of the body.
      // (Settled before the abort: aborting calls onResponseError at once.)
      const cancel = (reason: Error, error: DeliveryError) => {
        cancelled = reason;
        if (status) answered();
        else fail(error);
        controller?.abort(reason);
      };
      const timer = setTimeout(() => cancel(new Error('deadline'), 'timeout'), this.timeoutMs);
      const onAbort = () => cancel(new Error('aborted'), 'aborted');
      if (abort?.aborted) return onAbort();
      abort?.addEventListener('abort', onAbort, { once: true });
      let target: Target;
      try {
        target = this.targetOf(url);
      } catch {
        return fail('connection_failed');
      }
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart: (c) => {
          if (cancelled) c.abort(cancelled);
          else controller = c;
        },
        onResponseStart: (_c, statusCode, responseHeaders) => {
          // 1xx interim answers are not the verdict.
          if (statusCode < 200) return;
          status = statusCode;
          const value = responseHeaders['retry-after'];
          if (typeof value === 'string') retryAfter = value;
        },
        onResponseData: (c, chunk) => {
          if (status === 0) return;
          read += chunk.length;
          if (keptBytes < RESPONSE_KEEP_LIMIT) {
            const part = chunk.subarray(0, RESPONSE_KEEP_LIMIT - keptBytes);
            kept.push(Buffer.from(part));
            keptBytes += part.length;
          }
          // The verdict is the status line: the rest of a large body is not read.
          if (read >= RESPONSE_READ_LIMIT) {
            answered();
            c.abort(new Error('response body over the read limit'));
          }
        },
        onResponseEnd: () => answered(),
        // A body cut short after the status line changes nothing: the verdict is the status.
        onResponseError: (_c, err) => (status ? answered() : fail(classifyError(err))),
      };
      try {
        this.agent.dispatch(
          { origin: target.origin, path: target.path, method: 'POST', headers: { ...headers, 'user-agent': this.userAgent, 'content-length': String(body.length) }, body },
          handler,
        );
      } catch (err) {
        fail(classifyError(err));
      }
    });
  }

  /** The origin and path of an endpoint URL, parsed once per URL. */
  private targetOf(url: string): Target {
    let target = this.targets.get(url);
    if (!target) {
      const parsed = new URL(url);
      target = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
      if (this.targets.size >= 10_000) this.targets.clear();
      this.targets.set(url, target);
    }
    return target;
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
