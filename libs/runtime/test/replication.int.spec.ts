/**
 * Stream and bucket replicas from NATS_STREAM_REPLICAS, through the migrate step's own path
 * (provisionStreams) against the real one-node test server. One server refuses to create a
 * stream of 3 replicas (the refusal must name the setting), yet accepts raising an existing
 * stream's count (nats-server 2.9 on one node records it and places nothing more): that
 * shows the update path setting every stream and bucket to the configured count, and back.
 * The 3-node placement itself is NATS's (deploy/k8s, the compose `cluster` profile).
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

it('asked for 3 before any stream exists, refuses naming NATS_STREAM_REPLICAS, and creates nothing', async () => {
  await expect(provisionStreams({ ...ctx.env, NATS_STREAM_REPLICAS: '3' }, log)).rejects.toThrow(/cannot have 3 replica\(s\).*NATS_STREAM_REPLICAS must not exceed the JetStream servers/);
  await expect(bus.jsm.streams.info(bus.ns.stream('EVENTS'))).rejects.toThrow(/stream not found/);
});

it('makes every stream and bucket with one replica by default, and again changes nothing', async () => {
  await provisionStreams(ctx.env, log);
  const first = await replicas();
  expect(Object.keys(first).length).toBe(Object.keys(STREAMS).length + Object.keys(OBJECT_BUCKETS).length + Object.keys(KV_BUCKETS).length);
  expect(new Set(Object.values(first))).toEqual(new Set([1]));
  await provisionStreams({ ...ctx.env, NATS_STREAM_REPLICAS: '1' }, log);
  expect(await replicas()).toEqual(first);
});

it('updates every existing stream and bucket to the configured count at each run, and back', async () => {
  await provisionStreams({ ...ctx.env, NATS_STREAM_REPLICAS: '3' }, log);
  expect(new Set(Object.values(await replicas()))).toEqual(new Set([3]));
  await provisionStreams(ctx.env, log);
  expect(new Set(Object.values(await replicas()))).toEqual(new Set([1]));
});

it('refuses an even count before connecting', async () => {
  await expect(provisionStreams({ ...ctx.env, NATS_STREAM_REPLICAS: '2' }, log)).rejects.toThrow(/NATS_STREAM_REPLICAS: must be 1, 3 or 5/);
});
