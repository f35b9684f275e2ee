/**
 * The replay: the rollups rebuilt from the EVENTS stream (a new deployment, or after a fix in
 * the counting). The rollups and the ids counted are emptied (not the deleted environments,
 * whose events stay uncounted), then every event the stream holds is counted through the same
 * code as the live consumer, in stream order. It may run while the service runs:
 * an event the live consumer counts meanwhile is recorded with its id and skipped by the
 * replay, and the other way round, so nothing counts twice. The inboxes' domains are kept
 * (inbox_domains), so each event is filed under the same domain as before; an inbox first
 * seen in the replay is asked of mailbox and domains, which must be running. The stream keeps events 15 days
 * (contracts STREAMS.EVENTS): hours older than that are not in it, and a replay leaves them out.
 */
import { createDb, transactor } from '@mailroom/db';
import { RpcClient, connectBus } from '@mailroom/messaging';
import type { Env, Logger } from '@mailroom/platform';
import { busOptions, DeletedEnvironments, loadServiceConfig } from '@mailroom/runtime';
import { readEventStream, type EventStreamRead } from './clients/event-stream';
import { inboxDomainsClient } from './clients/inbox-domains.client';
import { Rollups } from './domain/rollups';
import { metricsService } from './main';
import { RollupRepository } from './repo/rollup.repository';
import type { MetricsDb } from './repo/tables';

const BATCH = 500;

export async function replayRollups(env: Env, log: Logger): Promise<EventStreamRead & { counted: number }> {
  const config = loadServiceConfig(metricsService, env);
  const db = createDb<MetricsDb>({ url: config.DATABASE_URL, schema: 'metrics', max: 2 });
  try {
    const bus = await connectBus(await busOptions('metrics', config, log));
    try {
      const store = new RollupRepository(db);
      const domains = inboxDomainsClient(new RpcClient(bus, { timeoutMs: 5_000 }));
      const rollups = new Rollups({ transact: transactor(db), store, tombstones: new DeletedEnvironments<MetricsDb>(), domains });
      await store.truncate();
      let counted = 0;
      const read = await readEventStream(bus, BATCH, async (events) => {
        counted += await rollups.record(events);
      });
      log.info({ ...read, counted }, 'rollups rebuilt from the EVENTS stream');
      return { ...read, counted };
    } finally {
      await bus.drain();
    }
  } finally {
    await db.destroy();
  }
}
