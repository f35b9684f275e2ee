/**
 * Outbox backlog, per service: rows written and not yet relayed to the bus. Counted in the
 * background at most once per sample interval (METRICS_SAMPLE_INTERVAL_MS; the count stops
 * at BACKLOG_COUNT_LIMIT, so a large backlog costs a bounded read), outside any trace;
 * a scrape reads the last count.
 */
import { context, trace } from '@opentelemetry/api';
import { sql, type Kysely } from '@mailroom/db';
import { SERVICE_ATTRIBUTE, meterOf, metricsOn, metricsSampleIntervalMs } from '@mailroom/platform';

/** Past this many rows the backlog reads as this many. */
export const BACKLOG_COUNT_LIMIT = 100_000;

interface Watched {
  attributes: Record<string, string>;
  rows?: number;
}

const watched = new Set<Watched>();
let observing = false;

function observe(): void {
  if (observing) return;
  observing = true;
  meterOf()
    .createObservableGauge('mailroom.outbox.backlog', { description: `Outbox rows not yet relayed to the bus (counted up to ${BACKLOG_COUNT_LIMIT}), as last sampled`, unit: '{row}' })
    .addCallback((result) => {
      for (const w of watched) if (w.rows !== undefined) result.observe(w.rows, w.attributes);
    });
}

/** Samples the backlog of `service`'s outbox until the returned function is called. */
export function watchOutbox(db: Kysely<unknown>, service: string): () => void {
  if (!metricsOn()) return () => {};
  observe();
  const w: Watched = { attributes: { [SERVICE_ATTRIBUTE]: service } };
  watched.add(w);
  let reading = false;
  const sample = () => {
    if (reading) return;
    reading = true;
    // Not in the trace of whatever started it (polling is not traced).
    context
      .with(trace.deleteSpan(context.active()), () =>
        sql<{ rows: number }>`select count(*)::int as rows from (select 1 from outbox where published_at is null limit ${BACKLOG_COUNT_LIMIT}) pending`.execute(db),
      )
      .then(
        (r) => void (w.rows = r.rows[0]?.rows ?? 0),
        // The database away: the last count stays (the pool's and the relay's own signals say why).
        () => {},
      )
      .finally(() => (reading = false));
  };
  sample();
  const timer = setInterval(sample, metricsSampleIntervalMs());
  timer.unref();
  return () => {
    clearInterval(timer);
    watched.delete(w);
  };
}
