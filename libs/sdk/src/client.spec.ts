import { Mailroom, MailroomError } from './index';

function recording(answer: (req: Request) => Response | Promise<Response>) {
  const sent: Request[] = [];
  const fetch = (async (req: Request) => {
    sent.push(req.clone());
    return answer(req);
  }) as typeof globalThis.fetch;
  return { fetch, sent };
}
const json = (status: number, body: unknown, headers: Record<string, string> = {}) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
const noWait = async () => undefined;

describe('Mailroom', () => {
  it('sends the API key from MAILROOM_API_KEY to MAILROOM_BASE_URL', async () => {
    const { fetch, sent } = recording(() => json(200, { data: [], next_page_token: null }));
    await new Mailroom({ fetch, env: { MAILROOM_API_KEY: 'mr_env', MAILROOM_BASE_URL: 'https://mail.example/' } }).mailbox.inbox.list();
    expect(sent[0]!.url).toBe('https://mail.example/api/v1/inboxes');
    expect(sent[0]!.headers.get('authorization')).toBe('Bearer mr_env');
  });

  it('gives a send an Idempotency-Key and sends it again with the same key after a lost answer', async () => {
    let calls = 0;
    const { fetch, sent } = recording(() => (++calls === 1 ? json(503, { error: { code: 'service_unavailable', message: 'down', request_id: 'r1' } }) : json(200, { message_id: 'msg_1', thread_id: 'thr_1' })));
    const mr = new Mailroom({ apiKey: 'mr_k', baseUrl: 'http://api.test', fetch, sleep: noWait, env: {} });
    const { data } = await mr.mailbox.message.send({ path: { inbox_id: 'inb_1' }, body: { to: ['a@b.test'], subject: 's', text_body: 't' } });
    expect(data).toEqual({ message_id: 'msg_1', thread_id: 'thr_1' });
    expect(sent).toHaveLength(2);
    const keys = sent.map((r) => r.headers.get('idempotency-key'));
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(await sent[1]!.text()).toBe(await sent[0]!.text());
  });

  it('keeps a key the caller gives, and gives none to a write that takes none (never retried)', async () => {
    const { fetch, sent } = recording(() => json(503, { error: { code: 'service_unavailable', message: 'down', request_id: 'r1' } }));
    const mr = new Mailroom({ apiKey: 'mr_k', baseUrl: 'http://api.test', fetch, sleep: noWait, env: {} });
    await mr.mailbox.inbox.create({ body: {}, headers: { 'Idempotency-Key': 'mine' } }).catch(() => undefined);
    expect(sent.map((r) => r.headers.get('idempotency-key'))).toEqual(['mine', 'mine', 'mine']);
    sent.length = 0;
    await mr.auth.user.login({ body: { email: 'a@b.test', password: 'pw' } }).catch(() => undefined);
    expect(sent.map((r) => r.headers.get('idempotency-key'))).toEqual([null]);
  });

  it("throws the API's error as a MailroomError: code, message, request id, details, Retry-After", async () => {
    const body = { error: { code: 'invalid_request', message: 'limit: at most 100', request_id: 'req_1', details: [{ path: 'limit', message: 'at most 100' }] } };
    const { fetch } = recording(() => json(400, body));
    const err = await new Mailroom({ apiKey: 'k', baseUrl: 'http://api.test', fetch, env: {} }).mailbox.inbox.list({ query: { limit: 1000 } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MailroomError);
    expect(err).toMatchObject({ status: 400, code: 'invalid_request', message: 'limit: at most 100', requestId: 'req_1', details: [{ path: 'limit', message: 'at most 100' }] });
    const limited = recording(() => json(429, { error: { code: 'rate_limited', message: 'slow down', request_id: 'req_2' } }, { 'retry-after': '7' }));
    const err429 = await new Mailroom({ apiKey: 'k', baseUrl: 'http://api.test', fetch: limited.fetch, maxRetries: 0, env: {} }).mailbox.inbox.list().catch((e: unknown) => e);
    expect(err429).toMatchObject({ status: 429, code: 'rate_limited', retryAfter: 7 });
  });

  it('throws a network failure as a MailroomError with code network_error, after the retries', async () => {
    const { fetch, sent } = recording(() => {
      throw new TypeError('fetch failed');
    });
    const err = await new Mailroom({ apiKey: 'k', baseUrl: 'http://api.test', fetch, sleep: noWait, env: {} }).mailbox.inbox.list().catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 0, code: 'network_error' });
    expect(sent).toHaveLength(3);
  });

  it('pages through a list until next_page_token is null', async () => {
    const pages: Record<string, unknown> = { '': { data: [1, 2], next_page_token: 'p2' }, p2: { data: [3], next_page_token: 'p3' }, p3: { data: [], next_page_token: null } };
    const { fetch, sent } = recording((req) => json(200, pages[new URL(req.url).searchParams.get('page_token') ?? '']));
    const mr = new Mailroom({ apiKey: 'k', baseUrl: 'http://api.test', fetch, env: {} });
    const items: unknown[] = [];
    for await (const item of mr.paginate((page_token) => mr.mailbox.inbox.list({ query: { limit: 2, ...(page_token ? { page_token } : {}) } }))) items.push(item);
    expect(items).toEqual([1, 2, 3]);
    expect(sent.map((r) => new URL(r.url).search)).toEqual(['?limit=2', '?limit=2&page_token=p2', '?limit=2&page_token=p3']);
  });
});
