import { BUS_ACCESS, BUS_IDENTITIES, CONSUMERS, KV_BUCKETS, consumerFilter, PUBLISHED_SUBJECTS, SERVICE_ONLY_OPERATIONS, UNPUBLISHED, UNREAD_STREAMS, type BusAccess } from './bus-access';
import { CONSUMABLE, STREAMS } from './bus';
import { OBJECT_BUCKETS } from './mail';
import { RPC, rpcServiceOf, type RpcName } from './rpc';

const entries = Object.entries(BUS_ACCESS) as [string, BusAccess][];
const who = (pick: (a: BusAccess) => readonly string[]) => (item: string) => entries.filter(([, a]) => pick(a).includes(item)).map(([name]) => name);

describe('the bus access table covers the catalog', () => {
  it('names every identity once', () => {
    expect(Object.keys(BUS_ACCESS).sort()).toEqual([...BUS_IDENTITIES].sort());
  });

  it.each(PUBLISHED_SUBJECTS)('%s has exactly one publisher (or a reason for none)', (subject) => {
    const publishers = who((a) => a.publishes)(subject);
    if (UNPUBLISHED[subject]) expect(publishers).toEqual([]);
    else expect(publishers).toHaveLength(1);
  });

  it('publishes nothing outside the catalog', () => {
    for (const [, access] of entries) for (const subject of access.publishes) expect(PUBLISHED_SUBJECTS).toContain(subject);
  });

  it.each(Object.keys(RPC) as RpcName[])('%s has a caller, and no service calls itself', (op) => {
    const callers = who((a) => a.calls)(op);
    expect(callers.length).toBeGreaterThan(0);
    expect(callers).not.toContain(rpcServiceOf(op));
  });

  it('keeps service-only operations away from the gateway', () => {
    for (const op of SERVICE_ONLY_OPERATIONS) expect(BUS_ACCESS.gateway.calls).not.toContain(op);
  });

  it.each(Object.keys(CONSUMERS))('consumer %s belongs to exactly one identity', (consumer) => {
    expect(who((a) => a.consumes)(consumer)).toHaveLength(1);
  });

  const filtered = Object.entries(CONSUMERS).flatMap(([name, c]) => {
    const filter = consumerFilter(name);
    return filter ? [[name, c.stream, filter] as const] : [];
  });
  it.each(filtered)('consumer %s reads of %s a subject stored there (%s)', (_name, stream, filter) => {
    expect(PUBLISHED_SUBJECTS).toContain(filter);
    expect(STREAMS[stream].subjects.some((p) => p === filter || (p.endsWith('.>') && filter.startsWith(p.slice(0, -1))))).toBe(true);
  });

  it.each(Object.keys(STREAMS))('stream %s is read by someone', (stream) => {
    const byConsumer = Object.values(CONSUMERS).some((c) => c.stream === stream);
    const unread = UNREAD_STREAMS[stream as keyof typeof UNREAD_STREAMS] !== undefined;
    expect(byConsumer || who((a) => a.follows)(stream).length > 0).toBe(!unread);
  });

  it.each(Object.keys(CONSUMABLE))('what a consumer reads (%s) lives in a stream with a catalogued consumer', (subject) => {
    const stream = CONSUMABLE[subject as keyof typeof CONSUMABLE].stream;
    expect(Object.values(CONSUMERS).some((c) => c.stream === stream)).toBe(true);
  });

  it.each(Object.keys(OBJECT_BUCKETS))('object bucket %s has a writer and a reader', (bucket) => {
    const modes = entries.map(([, a]) => a.buckets[bucket as keyof typeof OBJECT_BUCKETS]).filter(Boolean);
    expect(modes).toContain('write');
    expect(modes.length).toBeGreaterThan(1);
  });

  it.each(Object.keys(KV_BUCKETS))('KV bucket %s is used', (bucket) => {
    expect(who((a) => a.kv)(bucket).length).toBeGreaterThan(0);
  });

  it('lets only migrate provision', () => {
    expect(entries.filter(([, a]) => a.provisions).map(([name]) => name)).toEqual(['migrate']);
  });
});
