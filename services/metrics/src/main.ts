/**
 * The metrics service: hourly rollups of every public event (per organization, environment,
 * inbox, custom domain and hour), and the activity, summary and deliverability answers read from them.
 *
 * The composition root. `node services/metrics/dist/main.js` runs it alone (libs/runtime gives
 * it its logger, database, bus, lifecycle, health and telemetry); the all-in-one runs it beside
 * the others. `node services/metrics/dist/cli.js replay` rebuilds the rollups from the stream.
 */
import path from 'node:path';
import { STREAMS } from '@mailroom/contracts';
import { transactor } from '@mailroom/db';
import { RpcClient, serveRpc } from '@mailroom/messaging';
import { Rounds } from '@mailroom/platform';
import { DeletedEnvironments, runService, type ServiceModule } from '@mailroom/runtime';
import { loadConfig, type MetricsConfig } from './config';
import { inboxDomainsClient } from './clients/inbox-domains.client';
import { startEnvironmentDeletedConsumer } from './consumers/environment-deleted.consumer';
import { runRollupConsumer } from './consumers/events.consumer';
import { Metrics } from './domain/metrics';
import { Rollups } from './domain/rollups';
import { RollupRepository } from './repo/rollup.repository';
import type { MetricsDb } from './repo/tables';
import { metricsHandlers } from './rpc/handlers';

/** Ids of counted events are kept this long: past the stream's max age no message can come back (a day of margin). */
export const PROCESSED_RETENTION_MS = (STREAMS.EVENTS.maxAgeSeconds + 86_400) * 1000;

export const metricsService: ServiceModule<MetricsConfig, MetricsDb> = {
  name: 'metrics',
  database: { schema: 'metrics', migrationsDir: path.join(__dirname, '..', 'migrations') },
  loadConfig,
  async start({ config, bus, db, life, clock, log }) {
    const store = new RollupRepository(db);
    const metrics = new Metrics({ store, clock, settings: config.settings });
    life.add('metrics:rpc', serveRpc(bus, 'metrics', metricsHandlers(metrics)), (s) => s.stop());
    const domains = inboxDomainsClient(new RpcClient(bus, { timeoutMs: 5_000 }));
    const rollups = new Rollups({ transact: transactor(db), store, tombstones: new DeletedEnvironments<MetricsDb>(), domains });
    life.add('metrics:rollup', await runRollupConsumer(bus, rollups, { concurrency: config.METRICS_CONSUMER_CONCURRENCY }), (c) => c.stop());
    life.add('metrics:environment-deleted', await startEnvironmentDeletedConsumer(bus, rollups), (c) => c.stop());
    const pruneLog = log.child({ component: 'metrics-prune' });
    const prune = new Rounds(
      async () => {
        const pruned = await store.pruneProcessed(new Date(clock.now().getTime() - PROCESSED_RETENTION_MS));
        if (pruned) pruneLog.info({ pruned }, 'forgot the ids of events the stream no longer holds');
        return false;
      },
      (err) => pruneLog.warn({ err }, 'pruning counted event ids failed; next round tries again'),
      config.METRICS_PRUNE_INTERVAL_MS,
    );
    life.add('metrics:prune', prune, (p) => p.stop());
    prune.start();
  },
};

if (require.main === module) void runService(metricsService, process.env);
