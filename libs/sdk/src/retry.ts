/**
 * Retries, as a fetch: a request is sent again only when sending it twice cannot do twice what
 * once does: GET, HEAD, PUT, DELETE, and a write that carries an Idempotency-Key (the API
 * answers a repeated key and body with the first answer). It is retried on a network failure,
 * 408, 429, 500, 502, 503 and 504, after the Retry-After the API asked for, else after an
 * exponential backoff with jitter.
 */
import { retryAfterSeconds } from './errors';

export interface RetryOptions {
  /** Attempts after the first (default 2; 0 never retries). */
  maxRetries?: number;
  /** The longest wait between attempts, in ms, whatever Retry-After says (default 30 000). */
  maxDelayMs?: number;
  fetch?: typeof fetch;
  /** Waits between attempts (tests pass theirs). */
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
  random?: () => number;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);
const RETRIED_STATUSES = new Set([408, 429, 500, 502, 503, 504]);
const BASE_DELAY_MS = 500;

export function isRetrySafe(request: Request): boolean {
  return SAFE_METHODS.has(request.method) || request.headers.has('idempotency-key');
}

/** The wait before attempt `attempt + 1` (attempt counts from 0). */
export function retryDelayMs(attempt: number, response: Response | undefined, opts: { maxDelayMs: number; now: () => number; random: () => number }): number {
  const asked = response ? retryAfterSeconds(response.headers.get('retry-after'), opts.now()) : undefined;
  const delay = asked !== undefined ? asked * 1000 : BASE_DELAY_MS * 2 ** attempt * (0.5 + opts.random() / 2);
  return Math.min(delay, opts.maxDelayMs);
}

export function retryingFetch(opts: RetryOptions = {}): typeof fetch {
  const send = opts.fetch ?? globalThis.fetch;
  const maxRetries = opts.maxRetries ?? 2;
  const timing = { maxDelayMs: opts.maxDelayMs ?? 30_000, now: opts.now ?? Date.now, random: opts.random ?? Math.random };
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  return async (input, init) => {
    const request = new Request(input, init);
    const retries = isRetrySafe(request) ? maxRetries : 0;
    for (let attempt = 0; ; attempt++) {
      // A body can be read once: each attempt sends a copy.
      const copy = request.clone();
      let response: Response;
      try {
        response = await send(copy);
      } catch (err) {
        if (attempt >= retries || request.signal.aborted) throw err;
        await sleep(retryDelayMs(attempt, undefined, timing));
        continue;
      }
      if (attempt >= retries || !RETRIED_STATUSES.has(response.status)) return response;
      await response.body?.cancel();
      await sleep(retryDelayMs(attempt, response, timing));
    }
  };
}
