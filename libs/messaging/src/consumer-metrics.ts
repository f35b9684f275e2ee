/**
 * JetStream consumer metrics, per durable consumer: its lag (the server's num_pending:
 * messages of its stream not yet delivered to it), the messages delivered and not yet
 * acknowledged (num_ack_pending), and the redeliveries this instance received (a delivery
 * count above 1). Lag is read from the server's consumer info at most once per sample
 * interval (METRICS_SAMPLE_INTERVAL_MS), in the background: a scrape reads the last sample
 * and asks the server nothing. Each instance of a service reports the same lag: aggregate it with max.
 */
import type { Counter } from '@opentelemetry/api';
import { SERVICE_ATTRIBUTE, meterOf, metricsOn, metricsSampleIntervalMs } from '@mailroom/platform';
import type { Bus } from './bus';

interface Watched {
  attributes: Record<string, string>;
  pending?: number;
  ackPending?: number;
}

const watched = new Set<Watched>();
let instruments: { redeliveries: Counter } | undefined;

function made() {
  if (instruments) return instruments;
  const meter = meterOf();
  const lag = meter.createObservableGauge('mailroom.consumer.lag', { description: 'Messages of the stream not yet delivered to the durable consumer (num_pending), as last sampled', unit: '{message}' });
  const ackPending = meter.createObservableGauge('mailroom.consumer.ack_pending', { description: 'Messages delivered to the durable consumer and not yet acknowledged (num_ack_pending), as last sampled', unit: '{message}' });
  meter.addBatchObservableCallback(
    (result) => {
      for (const w of watched) {
        if (w.pending !== undefined) result.observe(lag, w.pending, w.attributes);
        if (w.ackPending !== undefined) result.observe(ackPending, w.ackPending, w.attributes);
      }
    },
    [lag, ackPending],
  );
  instruments = {
    redeliveries: meter.createCounter('mailroom.consumer.redeliveries', { description: 'Messages this instance received again (delivery count above 1), per durable consumer', unit: '{message}' }),
  };
  return instruments;
}

export interface ConsumerMetrics {
  /** A message came with a delivery count above 1. */
  redelivered(): void;
  stop(): void;
}

const OFF: ConsumerMetrics = { redelivered() {}, stop() {} };

/** Starts sampling `durable` (the catalog's name) of `stream` (both as the server knows them: namespaced). */
export function watchConsumer(bus: Bus, stream: string, serverDurable: string, durable: string): ConsumerMetrics {
  if (!metricsOn()) return OFF;
  const { redeliveries } = made();
  const w: Watched = { attributes: { 'messaging.system': 'nats', 'messaging.consumer.group.name': durable, [SERVICE_ATTRIBUTE]: durable.split('--')[0]! } };
  watched.add(w);
  // The series exists from the start, at 0: a dashboard tells "none" from "not reported".
  redeliveries.add(0, w.attributes);
  let reading = false;
  const sample = () => {
    if (reading) return;
    reading = true;
    bus.jsm.consumers
      .info(stream, serverDurable)
      .then(
        (info) => {
          w.pending = info.num_pending;
          w.ackPending = info.num_ack_pending;
        },
        // Not known now (the server away, the consumer being made again): the last sample stays.
        () => {},
      )
      .finally(() => (reading = false));
  };
  sample();
  const timer = setInterval(sample, metricsSampleIntervalMs());
  timer.unref();
  return {
    redelivered: () => redeliveries.add(1, w.attributes),
    stop() {
      clearInterval(timer);
      watched.delete(w);
    },
  };
}
