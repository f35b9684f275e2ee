/**
 * The SDK's entry: the generated client of every operation (`mr.mailbox.inbox.create(...)`,
 * nested by operation id), set up with the API key, the base URL, retries, an automatic
 * Idempotency-Key on the writes that take one, and errors thrown as MailroomError.
 */
import { randomUUID } from 'node:crypto';
import { createClient } from './generated/client';
import { MailroomApi } from './generated/sdk.gen';
import { OPERATIONS } from './generated/operations.gen';
import { toMailroomError } from './errors';
import { retryingFetch, type RetryOptions } from './retry';

export interface MailroomOptions extends RetryOptions {
  /** An API key (mr_...) or a user access token; default MAILROOM_API_KEY. */
  apiKey?: string;
  /** Default MAILROOM_BASE_URL, else http://localhost:8080. */
  baseUrl?: string;
  /** Sent with every request (for example X-Env-Id with a user access token). */
  headers?: Record<string, string>;
  /** Where the defaults are read (default process.env). */
  env?: Record<string, string | undefined>;
}

/** One page of a list: the API's pagination convention. */
export interface Page<Item> {
  data: Item[];
  next_page_token: string | null;
}

/** `POST /api/v1/inboxes`-style keys of the operations that honour an Idempotency-Key. */
const TAKES_IDEMPOTENCY_KEY = new Set(OPERATIONS.filter((op) => op.idempotencyKey).map((op) => `${op.method} ${op.url}`));

/** What every SDK method takes (hey-api's request options, loosely typed for calls chosen at run time). */
export interface CallOptions {
  path?: Record<string, unknown>;
  query?: Record<string, unknown>;
  body?: unknown;
  headers?: Record<string, string>;
  /** How to read the answer (default: by its Content-Type). */
  parseAs?: 'arrayBuffer' | 'auto' | 'blob' | 'json' | 'stream' | 'text';
}

/** An operation id's part as the generator names the SDK's members: mail-send -> mailSend. */
const memberName = (segment: string) => segment.replace(/[-_]+([a-z0-9])/gi, (_, c: string) => c.toUpperCase());
const member = (node: unknown, segment: string): unknown => (typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[memberName(segment)] : undefined);

export class Mailroom extends MailroomApi {
  readonly baseUrl: string;

  constructor(opts: MailroomOptions = {}) {
    const env = opts.env ?? process.env;
    const apiKey = opts.apiKey ?? env.MAILROOM_API_KEY;
    const baseUrl = (opts.baseUrl ?? env.MAILROOM_BASE_URL ?? 'http://localhost:8080').replace(/\/+$/, '');
    const client = createClient({
      baseUrl,
      fetch: retryingFetch(opts),
      throwOnError: true,
      ...(apiKey ? { auth: () => apiKey } : {}),
      ...(opts.headers ? { headers: opts.headers } : {}),
    });
    // A send retried after a lost answer must not send twice: the same key goes with every attempt.
    client.interceptors.request.use((request, options) => {
      if (TAKES_IDEMPOTENCY_KEY.has(`${request.method} ${options.url}`) && !request.headers.has('idempotency-key')) {
        request.headers.set('idempotency-key', randomUUID());
      }
      return request;
    });
    client.interceptors.error.use((error, response) => toMailroomError(error, response));
    super({ client });
    this.baseUrl = baseUrl;
  }

  /**
   * Calls an operation by its id (`mailbox.message.reply`), for callers that choose the
   * operation at run time (the MCP server, a CLI); code that knows it calls the typed method.
   */
  async call(operationId: string, options: CallOptions = {}): Promise<{ data: unknown; response: Response }> {
    const segments = operationId.split('.');
    const owner = segments.slice(0, -1).reduce<unknown>(member, this);
    const target = member(owner, segments.at(-1) ?? '');
    if (typeof target !== 'function') throw new TypeError(`the SDK has no operation ${operationId}`);
    return (target as (o: CallOptions) => Promise<{ data: unknown; response: Response }>).call(owner, options);
  }

  /**
   * Every item of a paged list, page after page:
   *   for await (const m of mr.paginate((page_token) => mr.mailbox.message.list({ path: { inbox_id }, query: { page_token } })))
   */
  async *paginate<Item>(fetchPage: (pageToken: string | undefined) => Promise<{ data: Page<Item> }>): AsyncGenerator<Item> {
    let token: string | undefined;
    do {
      const { data: page } = await fetchPage(token);
      yield* page.data;
      token = page.next_page_token ?? undefined;
    } while (token !== undefined);
  }
}
