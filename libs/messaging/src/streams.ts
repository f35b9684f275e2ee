/** Streams made, or updated to the catalog's settings, by the migrate step (provision.ts): services at run time may not. */
import { RetentionPolicy, StorageType, DiscardPolicy, JetStreamApiError, type StreamConfig } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { STREAMS, type StreamName } from '@mailroom/contracts';
import type { Bus } from './bus';

const RETENTION = {
  limits: RetentionPolicy.Limits,
  workqueue: RetentionPolicy.Workqueue,
  interest: RetentionPolicy.Interest,
} as const;

export function streamConfig(bus: Bus, name: StreamName): Partial<StreamConfig> & { name: string } {
  const spec = STREAMS[name];
  return {
    name: bus.ns.stream(name),
    subjects: spec.subjects.map((s) => bus.ns.subject(s)),
    retention: RETENTION[spec.retention],
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    max_age: nanos(spec.maxAgeSeconds * 1000),
    duplicate_window: nanos(spec.duplicateWindowSeconds * 1000),
    description: spec.description,
    num_replicas: 1,
  };
}

export async function ensureStreams(bus: Bus, names: readonly StreamName[]): Promise<void> {
  for (const name of names) {
    const config = streamConfig(bus, name);
    try {
      await bus.jsm.streams.info(config.name);
      await bus.jsm.streams.update(config.name, config);
    } catch (err) {
      if (!(err instanceof JetStreamApiError) || err.code !== 10059) throw err;
      try {
        await bus.jsm.streams.add(config);
      } catch (addErr) {
        // Another instance created it in between: make sure it has our settings.
        if (addErr instanceof JetStreamApiError && addErr.code === 10058) {
          await bus.jsm.streams.update(config.name, config);
        } else {
          throw addErr;
        }
      }
    }
  }
}

/** Deletes every stream of this namespace: for tests, which own their namespace. */
export async function deleteNamespaceStreams(bus: Bus): Promise<string[]> {
  if (!bus.ns.prefix) throw new Error('refusing to delete streams of the empty namespace');
  const deleted: string[] = [];
  for await (const name of bus.jsm.streams.names()) {
    if (name.replace(/^(KV|OBJ)_/, '').startsWith(`${bus.ns.prefix}_`)) {
      await bus.jsm.streams.delete(name);
      deleted.push(name);
    }
  }
  return deleted;
}
