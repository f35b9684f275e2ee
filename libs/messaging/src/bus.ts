/** A connection to NATS with its JetStream handles and namespace. */
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { Logger } from 'pino';
import { credsAuthenticator } from '@nats-io/nats-core';
import { inboxPrefix } from './bus-permissions';
import type { ContextSeal } from './context-seal';
import { storedSeal, type StoredSeal } from './stored-seal';
import { Namespace } from './namespace';
import { busTlsOption, type BusTls } from './tls';
import { connectCoalescing } from './transport';

export interface BusOptions {
  servers: string | string[];
  /** Connection name shown in NATS monitoring: the service's name. */
  name: string;
  namespace?: string;
  log: Logger;
  /**
   * The bus identity (contracts BUS_IDENTITIES, or a test's) and its credentials file: the
   * server admits it with the permissions its JWT carries. Replies come to inboxes named
   * after the identity, which only it may subscribe to. Without creds: anonymous, for a
   * development server that allows it.
   */
  identity?: { name: string; creds?: Uint8Array | undefined };
  /** Seals tenant contexts this bus sends, and/or checks those it serves (context-seal.ts). */
  seal?: ContextSeal;
  /** Keys of the stored subjects it publishes or reads (stored-seal.ts); absent: nothing sealed, nothing checked. */
  subjectKeys?: Map<string, Buffer>;
  /** TLS to the server (see busTlsOption): on when given, or when a server URL is tls://. */
  tls?: BusTls;
}

export interface Bus {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  ns: Namespace;
  log: Logger;
  /** Absent: contexts are sent unsealed and believed as they come (development without credentials). */
  seal?: ContextSeal;
  /** Absent: stored messages are published unsealed and read as they come (development without credentials). */
  stored?: StoredSeal;
  /** Finishes in-flight callbacks and closes; safe to call more than once. */
  drain(): Promise<void>;
}

export async function connectBus(opts: BusOptions): Promise<Bus> {
  const ns = new Namespace(opts.namespace ?? '');
  const nc = await connectCoalescing({
    ...(opts.identity ? { inboxPrefix: inboxPrefix(opts.identity.name, ns) } : {}),
    ...(opts.identity?.creds ? { authenticator: credsAuthenticator(opts.identity.creds) } : {}),
    servers: opts.servers,
    name: opts.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    pingInterval: 10_000,
    // Async traces build two Error objects (with stacks) per request: a measurable cost on the hot path.
    noAsyncTraces: true,
    ...busTlsOption(opts.servers, opts.tls),
  });
  const log = opts.log.child({ component: 'nats' });
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'reconnect' || s.type === 'error') log.warn({ status: s.type }, 'nats status');
    }
  })().catch(() => {});
  // A refused JetStream (no permission, no JetStream) must not leave the connection open.
  const jsm = await jetstreamManager(nc).catch(async (err: unknown) => {
    await nc.close().catch(() => {});
    throw err;
  });
  let draining: Promise<void> | undefined;
  return {
    nc,
    js: jetstream(nc),
    jsm,
    ns,
    log,
    seal: opts.seal,
    ...(opts.subjectKeys ? { stored: storedSeal(opts.subjectKeys) } : {}),
    drain: () => {
      draining ??= nc.isClosed() ? Promise.resolve() : nc.drain().catch(() => nc.close());
      return draining;
    },
  };
}

/** Room kept in a NATS message for its headers (msgID, auth context, trace) next to the body. */
const HEADER_ROOM = 8 * 1024;
/** NATS's default max_payload, until the connection has the server's. */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;

/**
 * The largest body one NATS message of this bus can carry: the server's max_payload less
 * room for headers. (No connection at all, as in a test of writes alone: NATS's default.)
 */
export function maxBodyBytes(bus: Partial<Pick<Bus, 'nc'>>): number {
  return (bus.nc?.info?.max_payload ?? DEFAULT_MAX_PAYLOAD) - HEADER_ROOM;
}
