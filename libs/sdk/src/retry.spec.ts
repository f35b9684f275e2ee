import { retryDelayMs, retryingFetch } from './retry';

type Answer = Response | Error;

/** A fetch answering from a script, recording what it was sent. */
function scripted(answers: Answer[]) {
  const sent: { method: string; key: string | null; body: string }[] = [];
  const fetch = async (req: Request) => {
    sent.push({ method: req.method, key: req.headers.get('idempotency-key'), body: await req.text() });
    const next = answers.shift() ?? new Response('{}', { status: 200 });
    if (next instanceof Error) throw next;
    return next;
  };
  return { fetch: fetch as typeof globalThis.fetch, sent };
}

const slept: number[] = [];
const sleep = async (ms: number) => {
  slept.push(ms);
};
beforeEach(() => {
  slept.length = 0;
});
const status = (code: number, headers: Record<string, string> = {}) => new Response('{}', { status: code, headers });

describe('retryingFetch', () => {
  it('retries a GET after a 503 and a network failure, then answers the success', async () => {
    const { fetch, sent } = scripted([status(503), new TypeError('fetch failed'), status(200)]);
    const res = await retryingFetch({ fetch, sleep, random: () => 0.5 })('http://api.test/x');
    expect(res.status).toBe(200);
    expect(sent).toHaveLength(3);
    expect(slept).toEqual([375, 750]);
  });

  it('waits the Retry-After the API asked for, in seconds or as a date, capped', async () => {
    const now = () => Date.parse('2026-01-01T00:00:00Z');
    const { fetch } = scripted([status(429, { 'retry-after': '3' }), status(429, { 'retry-after': 'Thu, 01 Jan 2026 00:00:07 GMT' }), status(200)]);
    await retryingFetch({ fetch, sleep, now })('http://api.test/x');
    expect(slept).toEqual([3000, 7000]);
    expect(retryDelayMs(0, status(429, { 'retry-after': '3600' }), { maxDelayMs: 30_000, now, random: () => 0 })).toBe(30_000);
  });

  it('sends a POST with an Idempotency-Key again, the same key and body each time', async () => {
    const { fetch, sent } = scripted([status(502), status(201)]);
    const res = await retryingFetch({ fetch, sleep })('http://api.test/send', { method: 'POST', body: '{"a":1}', headers: { 'idempotency-key': 'k1' } });
    expect(res.status).toBe(201);
    expect(sent).toEqual([
      { method: 'POST', key: 'k1', body: '{"a":1}' },
      { method: 'POST', key: 'k1', body: '{"a":1}' },
    ]);
  });

  it('never sends a POST without an Idempotency-Key twice: the failure is the answer', async () => {
    const { fetch, sent } = scripted([status(503)]);
    expect((await retryingFetch({ fetch, sleep })('http://api.test/login', { method: 'POST', body: '{}' })).status).toBe(503);
    const failing = scripted([new TypeError('fetch failed')]);
    await expect(retryingFetch({ fetch: failing.fetch, sleep })('http://api.test/login', { method: 'POST', body: '{}' })).rejects.toThrow('fetch failed');
    expect(sent).toHaveLength(1);
    expect(failing.sent).toHaveLength(1);
  });

  it('answers a 4xx other than 408 and 429 at once, and the last failure once the retries are spent', async () => {
    const notFound = scripted([status(404)]);
    expect((await retryingFetch({ fetch: notFound.fetch, sleep })('http://api.test/x')).status).toBe(404);
    expect(notFound.sent).toHaveLength(1);
    const down = scripted([status(503), status(503), status(503), status(200)]);
    expect((await retryingFetch({ fetch: down.fetch, sleep, maxRetries: 2 })('http://api.test/x')).status).toBe(503);
    expect(down.sent).toHaveLength(3);
  });
});
