/**
 * The NATS permissions of a bus identity, derived from contracts' BUS_ACCESS and the
 * catalog: the subjects it may publish and subscribe to, including the JetStream API
 * subjects of exactly the streams, consumers and buckets it uses. Everything is allowed by
 * name, never by a wildcard over names (a namespace or a stream name is one token), so what
 * the table does not say is refused by the server. Nobody may delete a stream; only the
 * migrate identity creates and updates them.
 */
import {
  BUS_ACCESS,
  CONSUMERS,
  DISCOVERY_SUBJECT,
  KV_BUCKETS,
  OBJECT_BUCKETS,
  STREAMS,
  rpcNamesOf,
  rpcSubject,
  type BusIdentity,
  type RpcService,
  type StreamName,
} from '@mailroom/contracts';
import type { Namespace } from './namespace';

export interface NatsPermissions {
  pub: { allow: string[]; deny: string[] };
  sub: { allow: string[]; deny: string[] };
  /** Present for identities that answer requests: they may publish to the reply subject of a request they received, once, within ttl (nanoseconds). */
  resp?: { max: number; ttl: number };
}

const API = '$JS.API';

/**
 * How long a service has to answer a request: the server lets it publish its one answer
 * within this window (an RPC caller waits at most as long). The window also bounds the
 * server's record of answers owed: it notes every message delivered with a reply subject,
 * JetStream acks included, and walks that record to forget old entries (with nats-server's
 * default of 2 minutes, that walk took a third of its CPU under bench:ingest).
 */
export const RPC_ANSWER_WINDOW_MS = 10_000;

/** Subjects every identity's replies arrive on (requests, JetStream API answers, pulled messages). */
export function inboxPrefix(identity: string, ns: Namespace): string {
  return `_INBOX_${ns.consumer(identity)}`;
}

/**
 * Reading a stream through a consumer: its info, and the durable consumer named, or (none
 * named) the ordered consumers a read makes and drops, whose names are random. Consumers are
 * made through the API subjects that carry their name (not the older form that takes it in
 * the body); catalogued durables are protected by the deny list (busPermissions).
 */
function readStream(stream: string, consumer: string | undefined): string[] {
  const c = consumer ?? '*';
  return [
    `${API}.STREAM.INFO.${stream}`,
    `${API}.CONSUMER.CREATE.${stream}.${c}`,
    `${API}.CONSUMER.CREATE.${stream}.${c}.>`,
    `${API}.CONSUMER.INFO.${stream}.${c}`,
    `${API}.CONSUMER.MSG.NEXT.${stream}.${c}`,
    ...(consumer
      ? [`${API}.CONSUMER.DURABLE.CREATE.${stream}.${c}`, `$JS.ACK.${stream}.${c}.>`]
      : // An object read's ordered consumer pushes to the reader, which answers flow control.
        [`${API}.CONSUMER.DELETE.${stream}.*`, `$JS.FC.${stream}.>`]),
  ];
}

/** Durable consumers nobody may delete, and those of others nobody may create or change. */
function protectedConsumers(identity: BusIdentity, ns: Namespace): string[] {
  const own = new Set<string>(BUS_ACCESS[identity].consumes);
  return Object.entries(CONSUMERS).flatMap(([name, { stream }]) => {
    const [s, c] = [ns.stream(stream), ns.consumer(name)];
    const deleting = [`${API}.CONSUMER.DELETE.${s}.${c}`];
    return own.has(name) ? deleting : [...deleting, `${API}.CONSUMER.CREATE.${s}.${c}`, `${API}.CONSUMER.CREATE.${s}.${c}.>`, `${API}.CONSUMER.DURABLE.CREATE.${s}.${c}`];
  });
}

/** Reading single messages of a stream by subject (object and KV entries). */
function getMessages(stream: string): string[] {
  return [`${API}.STREAM.INFO.${stream}`, `${API}.STREAM.MSG.GET.${stream}`, `${API}.DIRECT.GET.${stream}`, `${API}.DIRECT.GET.${stream}.>`];
}

function objectBucket(ns: Namespace, bucket: keyof typeof OBJECT_BUCKETS, mode: 'read' | 'write'): string[] {
  const name = ns.stream(OBJECT_BUCKETS[bucket]);
  const stream = `OBJ_${name}`;
  const read = [...getMessages(stream), ...readStream(stream, undefined)];
  // Writing: chunks and metadata, and purging the chunks of a replaced or deleted object.
  return mode === 'read' ? read : [...read, `$O.${name}.>`, `${API}.STREAM.PURGE.${stream}`];
}

function kvBucket(ns: Namespace, bucket: keyof typeof KV_BUCKETS): string[] {
  const name = ns.stream(KV_BUCKETS[bucket].name);
  return [...getMessages(`KV_${name}`), `$KV.${name}.>`];
}

/** Every stream of the catalog as named on the server: streams, object buckets, KV buckets. */
export function serverStreams(ns: Namespace): string[] {
  return [
    ...Object.keys(STREAMS).map((s) => ns.stream(s)),
    ...Object.values(OBJECT_BUCKETS).map((b) => `OBJ_${ns.stream(b)}`),
    ...Object.values(KV_BUCKETS).map((b) => `KV_${ns.stream(b.name)}`),
  ];
}

function provision(ns: Namespace): string[] {
  return serverStreams(ns).flatMap((s) => [`${API}.STREAM.INFO.${s}`, `${API}.STREAM.CREATE.${s}`, `${API}.STREAM.UPDATE.${s}`]);
}

/** The rpc subjects an identity serves: its own operations (none for the gateway and migrate); the discovery ping besides. */
function served(identity: BusIdentity): string[] {
  return rpcNamesOf(identity as RpcService).map(rpcSubject);
}

/** Watching the platform: the discovery ping, and the info of every stream and durable consumer of the catalog. */
function monitor(ns: Namespace): string[] {
  return [
    ns.subject(DISCOVERY_SUBJECT),
    ...serverStreams(ns).map((s) => `${API}.STREAM.INFO.${s}`),
    ...Object.entries(CONSUMERS).map(([name, { stream }]) => `${API}.CONSUMER.INFO.${ns.stream(stream)}.${ns.consumer(name)}`),
  ];
}

export function busPermissions(identity: BusIdentity, ns: Namespace): NatsPermissions {
  const access = BUS_ACCESS[identity];
  // Every running service answers the discovery ping (libs/runtime); the migrate step is no service.
  const serves = [...served(identity), ...(identity === 'migrate' ? [] : [DISCOVERY_SUBJECT])].map((s) => ns.subject(s));
  const pub = [
    // Account information: the JetStream client asks for it when it starts.
    `${API}.INFO`,
    ...access.calls.map((op) => ns.subject(rpcSubject(op))),
    ...access.publishes.map((s) => ns.subject(s)),
    ...access.consumes.flatMap((c) => readStream(ns.stream(CONSUMERS[c].stream as StreamName), ns.consumer(c))),
    ...access.follows.flatMap((s) => readStream(ns.stream(s), undefined)),
    ...Object.entries(access.buckets).flatMap(([b, mode]) => objectBucket(ns, b as keyof typeof OBJECT_BUCKETS, mode)),
    ...access.kv.flatMap((k) => kvBucket(ns, k)),
    ...('provisions' in access ? provision(ns) : []),
    ...('monitors' in access ? monitor(ns) : []),
  ];
  const sub = [`${inboxPrefix(identity, ns)}.>`, ...serves];
  return {
    pub: { allow: [...new Set(pub)], deny: [`${API}.STREAM.DELETE.>`, ...protectedConsumers(identity, ns)] },
    sub: { allow: sub, deny: [] },
    ...(serves.length ? { resp: { max: 1, ttl: RPC_ANSWER_WINDOW_MS * 1_000_000 } } : {}),
  };
}
