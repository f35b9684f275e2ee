/**
 * What the bus says of itself: the instances that answer the discovery ping, NATS's round
 * trip, JetStream's storage against its limit, and the size of every stream and the backlog
 * of every durable consumer of the catalog (the monitoring permissions of bus-access.ts).
 */
import { CONSUMERS, type InstanceInfo } from '@mailroom/contracts';
import { discoverInstances, serverStreams, type Bus } from '@mailroom/messaging';
import type { BusObservation } from '../domain/ports';

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A missing consumer (its service never started) or stream is not an error of the bus. */
function notFound(err: unknown): boolean {
  return /not found/i.test(message(err));
}

export class BusHealthClient {
  constructor(private readonly bus: Bus) {}

  instances(): Promise<InstanceInfo[]> {
    return discoverInstances(this.bus);
  }

  async observe(): Promise<BusObservation> {
    const { nc, jsm, ns } = this.bus;
    const none = { storage_bytes: null, max_storage_bytes: null, streams: [], consumers: [] };
    try {
      if (nc.isClosed()) throw new Error('connection closed');
      await nc.flush();
    } catch (err) {
      return { reachable: false, error: message(err), jetstream: { reachable: false, error: 'NATS is unreachable', ...none } };
    }
    try {
      const account = await jsm.getAccountInfo();
      const streams = [];
      for (const name of serverStreams(ns)) {
        try {
          const info = await jsm.streams.info(name);
          streams.push({ name, messages: info.state.messages, bytes: info.state.bytes });
        } catch (err) {
          if (!notFound(err)) throw err;
        }
      }
      const consumers = [];
      for (const [durable, { stream }] of Object.entries(CONSUMERS)) {
        try {
          const info = await jsm.consumers.info(ns.stream(stream), ns.consumer(durable));
          consumers.push({ stream, name: durable, pending: info.num_pending, ack_pending: info.num_ack_pending, redelivered: info.num_redelivered });
        } catch (err) {
          if (!notFound(err)) throw err;
        }
      }
      const max = account.limits.max_storage;
      return {
        reachable: true,
        error: null,
        jetstream: { reachable: true, error: null, storage_bytes: account.storage, max_storage_bytes: max > 0 ? max : null, streams, consumers },
      };
    } catch (err) {
      return { reachable: true, error: null, jetstream: { reachable: false, error: message(err), ...none } };
    }
  }
}
