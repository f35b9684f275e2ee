/** Sealed auth contexts on the real server: only what the gateway sealed with this service's key, for that subject, is believed. */
import { randomBytes } from 'node:crypto';
import { headers as natsHeaders } from '@nats-io/transport-node';
import { AppError, HEADERS, KEY_SCOPES, RPC_SCHEMAS, newId, rpcSubject, type AuthContext } from '@mailroom/contracts';
import { createLogger } from '@mailroom/platform';
import { createTestContext, superuserCreds, type TestContext } from '@mailroom/testing';
import { Namespace, callRpc, connectBus, contextSeal, decodeJson, encodeJson, serveRpc, serviceSealKey, toHeaders, type Bus, type RpcHandlers, type RpcServer } from '../src';

const masterKey = randomBytes(32);
const otherKey = randomBytes(32);

const user: AuthContext = {
  kind: 'user',
  user_id: newId('user'),
  session_id: newId('session'),
  org_id: newId('organization'),
  env_id: newId('environment'),
  role: 'owner',
};
const apiKey: AuthContext = { kind: 'api_key', key_id: newId('apiKey'), org_id: newId('organization'), env_id: newId('environment'), permissions: [...KEY_SCOPES.full] };
const admin: AuthContext = { kind: 'admin', admin_key_id: newId('adminKey') };
const service: AuthContext = { kind: 'service', service: 'webhooks' };

// suppression.add answers with the kind of context it was served under, in `address`.
const handlers: RpcHandlers<'mail-send'> = {
  'mail-send.suppression.add': async (_req, c) => ({ address: c.auth.kind, reason: 'manual', message_id: null, created_at: new Date().toISOString() }),
  'mail-send.suppression.list': async () => ({ data: [], next_page_token: null }),
  'mail-send.suppression.delete': async () => ({}),
  'mail-send.outbound.check': async () => ({}),
  'mail-send.ses.notification': async () => {
    throw new AppError('forbidden', 'not here');
  },
};

let ctx: TestContext;
let server: Bus;
let gateway: Bus;
let rpc: RpcServer;
const logged: Record<string, unknown>[] = [];

beforeAll(async () => {
  ctx = await createTestContext();
  // As the tests identity (every subject), with the seals under test.
  const creds = await superuserCreds();
  const connect = (name: string, seal: Parameters<typeof contextSeal>[0], log = createLogger({ service: name, level: 'silent' })) =>
    connectBus({ servers: ctx.env.NATS_URL!, name, namespace: ctx.env.BUS_NAMESPACE, log, seal: contextSeal(seal), identity: { name: 'tests', creds } });
  server = await connect('mail-send', { keys: [serviceSealKey(masterKey, 'mail-send')] }, createLogger({ service: 'mail-send', level: 'warn', destination: { write: (line: string) => void logged.push(JSON.parse(line)) } }));
  gateway = await connect('gateway', { masterKey, keys: [] });
  rpc = serveRpc(server, 'mail-send', handlers);
  await server.nc.flush();
});

afterAll(async () => {
  await rpc?.stop();
  await Promise.all([gateway?.drain(), server?.drain()]);
  await ctx?.cleanup();
});

beforeEach(() => void logged.splice(0));

/** The kind the server saw, for `auth` sent by `bus` through callRpc. */
async function servedAs(bus: Bus, auth: AuthContext): Promise<string> {
  return (await callRpc(bus, 'mail-send.suppression.add', { address: 'a@example.com' }, { auth, requestId: newId('request') })).address;
}

/** The kind the server saw for a request to suppression.add published by hand with these headers. */
async function rawServedAs(headers: ReturnType<typeof natsHeaders>): Promise<string> {
  const reply = await server.nc.request(server.ns.subject(rpcSubject('mail-send.suppression.add')), encodeJson({ address: 'a@example.com' }), { headers, timeout: 5_000 });
  return RPC_SCHEMAS['mail-send.suppression.add'].response.parse(decodeJson(reply.data)).address;
}

describe('sealed auth contexts', () => {
  it('serves tenant and admin contexts the gateway sealed as they are', async () => {
    expect(await servedAs(gateway, user)).toBe('user');
    expect(await servedAs(gateway, apiKey)).toBe('api_key');
    expect(await servedAs(gateway, admin)).toBe('admin');
    expect(logged).toEqual([]);
  });

  it('serves a tenant context sealed under another key as anonymous, and logs the op and the claimed kind only', async () => {
    const forger = { ...gateway, seal: contextSeal({ masterKey: otherKey, keys: [] }) };
    expect(await servedAs(forger, user)).toBe('anonymous');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ level: 'warn', op: 'mail-send.suppression.add', claimed_kind: 'user', seal: 'invalid' });
    const line = JSON.stringify(logged[0]);
    for (const id of [user.user_id, user.session_id, user.org_id, user.env_id]) expect(line).not.toContain(id);
  });

  it('serves a tenant context from a bus without a seal as anonymous', async () => {
    const { seal: _, ...unsealed } = gateway;
    expect(await servedAs(unsealed, apiKey)).toBe('anonymous');
    expect(logged).toMatchObject([{ op: 'mail-send.suppression.add', claimed_kind: 'api_key', seal: 'missing' }]);
  });

  it('serves as anonymous a sealed request seen on one subject and replayed on another', async () => {
    // A service that can read another operation's requests takes the gateway's headers from one.
    const seen = new Promise<ReturnType<typeof natsHeaders>>((resolve) => {
      server.nc.subscribe(server.ns.subject(rpcSubject('mail-send.suppression.list')), { max: 1, callback: (_err, msg) => resolve(msg.headers!) });
    });
    await server.nc.flush();
    await callRpc(gateway, 'mail-send.suppression.list', {}, { auth: user, requestId: newId('request') });
    const headers = await seen;
    expect(headers.get(HEADERS.authSeal)).toMatch(/^\d+\.[A-Za-z0-9_-]{43}$/);
    expect(await rawServedAs(headers)).toBe('anonymous');
    expect(logged).toMatchObject([{ op: 'mail-send.suppression.add', claimed_kind: 'user', seal: 'invalid' }]);
  });

  it('serves a hand-written Mr-Auth header without a seal as anonymous', async () => {
    const h = natsHeaders();
    h.set(HEADERS.requestId, 'forged');
    h.set(HEADERS.auth, JSON.stringify(admin));
    expect(await rawServedAs(h)).toBe('anonymous');
    h.set(HEADERS.authSeal, `${Date.now()}.${'A'.repeat(43)}`);
    expect(await rawServedAs(h)).toBe('anonymous');
    expect(logged).toMatchObject([
      { claimed_kind: 'admin', seal: 'missing' },
      { claimed_kind: 'admin', seal: 'invalid' },
    ]);
  });

  it('serves a sealed context whose JSON was changed on the way as anonymous', async () => {
    const subject = server.ns.subject(rpcSubject('mail-send.suppression.add'));
    const h = toHeaders({ auth: user, requestId: 'r' }, { seal: gateway.seal!, subject });
    h.set(HEADERS.auth, JSON.stringify({ ...user, org_id: newId('organization') }));
    expect(await rawServedAs(h)).toBe('anonymous');
  });

  it('serves service contexts unsealed, from any bus', async () => {
    const { seal: _, ...unsealed } = gateway;
    expect(await servedAs(unsealed, service)).toBe('service');
    expect(await servedAs(gateway, service)).toBe('service');
    expect(logged).toEqual([]);
  });

  it('believes contexts as they come on a bus without a seal, as before seals', async () => {
    // Its own namespace, so that the sealed server does not answer.
    const ns = new Namespace(`${ctx.env.BUS_NAMESPACE}_open`);
    const { seal: _, ...open } = { ...server, ns };
    const { seal: __, ...unsealed } = { ...gateway, ns };
    const openServer = serveRpc(open, 'mail-send', handlers);
    try {
      await open.nc.flush();
      expect(await servedAs(unsealed, user)).toBe('user');
      expect(await servedAs({ ...gateway, ns }, admin)).toBe('admin');
    } finally {
      await openServer.stop();
    }
  });
});
