/**
 * Stream and bucket replicas from NATS_STREAM_REPLICAS, through the migrate step's own path
 * (provisionStreams) against the real server. The test server is one node, which places one
 * replica only: provisioning with 3 must fail saying which setting asked for what the server
 * cannot place, and leave every stream as it was; the 3-node placement itself is NATS's
 * (deploy/k8s, the compose `cluster` profile).
 */
import { KV_BUCKETS, OBJECT_BUCKETS, STREAMS } from '@mailroom/contracts';
import { deleteNamespaceStreams, type Bus } from '@mailroom/messaging';
import { createLogger } from '@mailroom/platform';
import { connectTestBus, createTestContext, type TestContext } from '@mailroom/testing';
import { provisionStreams } from '../src';

let ctx: TestContext;
let bus: Bus;
const log = createLogger({ service: 'test', level: 'silent' });

beforeAll(async () => {
  ctx = await createTestContext({}, { bus: 'empty' });
  bus = await connectTestBus(ctx.env, 'migrate', 'test-replicas');
});

afterAll(async () => {
  await deleteNamespaceStreams(bus).catch(() => {});
  await bus?.drain();
  await ctx?.cleanup();
});

/** Every stream of the catalog, the buckets' included (NATS names them KV_ and OBJ_), with its replica count. */
async function replicas(): Promise<Record<string, number>> {
  const names = [
    ...Object.keys(STREAMS).map((s) => bus.ns.stream(s)),
    ...Object.values(OBJECT_BUCKETS).map((b) => `OBJ_${bus.ns.stream(b)}`),
    ...Object.values(KV_BUCKETS).map((k) => `KV_${bus.ns.stream(k.name)}`),
  ];
  const out: Record<string, number> = {};
  for (const name of names) out[name] = (await bus.jsm.streams.info(name)).config.num_replicas;
  return out;
}

it('makes every stream and bucket with one replica by default, and again changes nothing', async () => {
  await provisionStreams(ctx.env, log);
  const first = await replicas();
  expect(Object.keys(first).length).toBe(Object.keys(STREAMS).length + Object.keys(OBJECT_BUCKETS).length + Object.keys(KV_BUCKETS).length);
  expect(new Set(Object.values(first))).toEqual(new Set([1]));
  await provisionStreams({ ...ctx.env, NATS_STREAM_REPLICAS: '1' }, log);
  expect(await replicas()).toEqual(first);
});

it('asked for 3 on one server, fails naming NATS_STREAM_REPLICAS and leaves every stream as it was', async () => {
  const before = await replicas();
  await expect(provisionStreams({ ...ctx.env, NATS_STREAM_REPLICAS: '3' }, log)).rejects.toThrow(/cannot have 3 replica\(s\).*NATS_STREAM_REPLICAS must not exceed the JetStream servers/);
  expect(await replicas()).toEqual(before);
});

it('refuses an even count before connecting', async () => {
  await expect(provisionStreams({ ...ctx.env, NATS_STREAM_REPLICAS: '2' }, log)).rejects.toThrow(/NATS_STREAM_REPLICAS: must be 1, 3 or 5/);
});
