/**
 * Services as separate units on one bus: one stops, the gateway answers 503 (never a hang
 * or a 500) and recovers when it comes back, without a restart of its own.
 */
import { type Bus } from '@mailroom/messaging';
import { connectTestBus, ApiClient, bootServices, signUpTenant, waitFor, type BootedServices } from '@mailroom/testing';
import { SERVICES } from '../src/platform';
import { addColleague } from './colleagues';
import { useTestContext } from './fixtures';

// Short, for the 504 test (a silent subscriber), yet long enough for a signup on a busy CI machine (400 ms was not).
const ctx = useTestContext({ RPC_TIMEOUT_MS: '3000' });
let orgs: BootedServices;
let auth: BootedServices | undefined;
let gateway: BootedServices | undefined;

async function startGateway(env: Record<string, string> = {}): Promise<ApiClient> {
  gateway = await bootServices([SERVICES.gateway], { ...ctx.env, ...env });
  return new ApiClient(gateway.running[0]!.endpoints.http!);
}

beforeAll(async () => {
  orgs = await bootServices([SERVICES.orgs], ctx.env);
  ctx.onStop(() => orgs.stop());
  auth = await bootServices([SERVICES.auth], ctx.env);
  ctx.onStop(async () => auth?.stop());
});

afterEach(async () => {
  await gateway?.stop();
  gateway = undefined;
});

it('answers 503 while auth is down and works again once it is back', async () => {
  const api = await startGateway();
  const { key, accessToken: access } = await signUpTenant(api.baseUrl);
  expect((await api.get('/api/v1/org', { token: key })).status).toBe(200);

  await auth!.stop();
  auth = undefined;
  // Within the key cache's second the key still works; after it, auth is needed and absent.
  const down = await waitFor(async () => {
    const res = await api.get('/api/v1/org', { token: key });
    return res.status !== 200 && res;
  }, { timeoutMs: 5_000 });
  expect(down.status).toBe(503);
  expect(down.body.error).toMatchObject({ code: 'service_unavailable', request_id: expect.any(String) });
  expect((await api.post('/api/v1/auth/login', { email: 'x@example.com', password: 'whatever12' })).status).toBe(503);
  // Tokens verify locally: user requests that do not need auth keep working.
  expect((await api.get('/api/v1/org', { token: access })).status).toBe(200);

  auth = await bootServices([SERVICES.auth], ctx.env);
  await waitFor(async () => (await api.get('/api/v1/org', { token: key })).status === 200, { timeoutMs: 5_000 });
});

it('answers 504 when a service takes longer than RPC_TIMEOUT_MS', async () => {
  const api = await startGateway();
  const { key } = await signUpTenant(api.baseUrl);
  await orgs.stop();
  const bus: Bus = await connectTestBus(ctx.env, 'orgs', 'silent-orgs');
  const silent = bus.nc.subscribe(bus.ns.subject('rpc.orgs.organization.get'), { queue: bus.ns.queue('orgs') });
  try {
    const res = await api.get('/api/v1/org', { token: key });
    expect(res.status).toBe(504);
    expect(res.body.error.code).toBe('gateway_timeout');
  } finally {
    silent.unsubscribe();
    await bus.drain();
    orgs = await bootServices([SERVICES.orgs], ctx.env);
  }
  expect((await api.get('/api/v1/org', { token: key })).status).toBe(200);
});

it('limits requests per credential and per address, with Retry-After', async () => {
  const api = await startGateway({ RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '3', RATE_LIMIT_ANONYMOUS_PER_MINUTE: '5' });
  const { key } = await signUpTenant(api.baseUrl);
  const statuses: number[] = [];
  let limited;
  for (let i = 0; i < 6; i++) {
    const res = await api.get('/api/v1/org', { token: key });
    statuses.push(res.status);
    if (res.status === 429) limited = res;
  }
  expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
  expect(limited!.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
  expect(limited!.body.error.code).toBe('rate_limited');
  // Anonymous: 5 a minute per address (signup used one); bad credentials count too.
  const anon: number[] = [];
  for (let i = 0; i < 6; i++) anon.push((await api.post('/api/v1/auth/login', { email: 'n@example.com', password: 'wrong password' })).status);
  expect(anon).toContain(429);
  expect(anon.filter((s) => s === 401).length).toBeLessThanOrEqual(4);
});

it('remembers a logout across a gateway restart', async () => {
  let api = await startGateway();
  const { accessToken: access, email } = await signUpTenant(api.baseUrl);
  const other = await api.post('/api/v1/auth/login', { email, password: 'correct horse battery' });
  expect((await api.post('/api/v1/auth/logout', undefined, { token: access })).status).toBe(204);
  await gateway!.stop();
  api = await startGateway();
  expect((await api.get('/api/v1/user/me', { token: access })).status).toBe(401);
  expect((await api.get('/api/v1/user/me', { token: other.body.access_token })).status).toBe(200);
});

it('remembers removals and role changes across a gateway restart', async () => {
  let api = await startGateway();
  const owner = await signUpTenant(api.baseUrl);
  const removed = await addColleague(ctx.env.DATABASE_URL!, api, owner, () => signUpTenant(api.baseUrl), 'member');
  const demoted = await addColleague(ctx.env.DATABASE_URL!, api, owner, () => signUpTenant(api.baseUrl), 'admin');
  const members = (await api.get('/api/v1/org/members?limit=100', { token: owner.accessToken })).body.data as { id: string; user_id: string }[];
  const idOf = (userId: string) => members.find((m) => m.user_id === userId)!.id;
  expect((await api.delete(`/api/v1/org/members/${idOf(removed.user_id)}`, { token: owner.accessToken })).status).toBe(204);
  expect((await api.patch(`/api/v1/org/members/${idOf(demoted.user_id)}`, { role: 'member' }, { token: owner.accessToken })).status).toBe(200);
  // Both facts are on the stream once this gateway has acted on them.
  await waitFor(async () => (await api.get('/api/v1/org', { token: removed.token })).status === 401 && (await api.patch('/api/v1/org', { name: 'x' }, { token: demoted.token })).status === 403);
  await gateway!.stop();
  api = await startGateway();
  expect((await api.get('/api/v1/org', { token: removed.token })).status).toBe(401);
  expect((await api.patch('/api/v1/org', { name: 'x' }, { token: demoted.token })).status).toBe(403);
  expect((await api.get('/api/v1/org', { token: demoted.token })).status).toBe(200);
});
