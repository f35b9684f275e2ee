/**
 * HTTP and RPC shapes of metrics (spec section 4, "Metrics"; issue 27): activity in hourly
 * buckets, totals of a range with the previous period, and deliverability (rates, latency,
 * a score and warnings). Every count comes from the metrics service's hourly rollups of the
 * public events; times are UTC, ISO 8601 with milliseconds. The rules of ranges (defaults,
 * at most 31 days, not in the future) need a clock: the metrics service checks them.
 */
import { z } from 'zod';
import { REJECTION_REASONS } from '../events';
import { idSchema } from '../ids';
import { isoTimestamp } from '../time';

/** The longest range one request may ask for. */
export const METRICS_MAX_RANGE_DAYS = 31;

const instant = (what: string) =>
  z.iso
    .datetime({ offset: true, error: `${what} must be an ISO 8601 date and time, e.g. 2026-11-01T00:00:00Z` })
    .optional()
    .describe(`${what}: ISO 8601 date and time (UTC or with an offset), rounded down to its hour`);

/** from, to and inbox_id of every metrics route (query string). */
export const metricsQuery = z.object({
  from: instant('from'),
  to: instant('to'),
  inbox_id: idSchema('inbox').optional().describe('Only this inbox of the environment; 404 for an inbox with no recorded activity here'),
  domain_id: idSchema('domain')
    .optional()
    .describe("Only the inboxes on this custom domain of the environment; 404 for a domain with no recorded activity here. With inbox_id: the inbox must be on the domain (else 400), and the answer is the inbox's"),
});
export type MetricsQuery = z.infer<typeof metricsQuery>;

const count = z.number().int().nonnegative();

/** What happened in a span of time. */
export const metricsCounts = z.object({
  received: count.describe('Messages stored in an inbox (message.received)'),
  sent: count.describe('Messages the mail provider accepted (message.sent)'),
  delivered: count.describe('Messages whose delivery was confirmed (message.delivered)'),
  bounced_hard: count.describe('Permanent bounces (message.bounced, bounce_type Permanent)'),
  bounced_soft: count.describe('Transient bounces (message.bounced, bounce_type Transient)'),
  complained: count.describe('Complaints (message.complained)'),
  rejected: count.describe('Sends refused before they left (message.rejected), every reason'),
  rejected_by_reason: z.object(Object.fromEntries(REJECTION_REASONS.map((r) => [r, count])) as Record<(typeof REJECTION_REASONS)[number], typeof count>),
});
export type MetricsCounts = z.infer<typeof metricsCounts>;

const range = {
  from: isoTimestamp.describe('Start of the range, included (an hour boundary)'),
  to: isoTimestamp.describe('End of the range, excluded (an hour boundary)'),
};

export const metricsActivity = z.object({
  ...range,
  inbox_id: idSchema('inbox').nullable(),
  domain_id: idSchema('domain').nullable(),
  buckets: z.array(metricsCounts.extend({ start: isoTimestamp.describe('Start of the hour, UTC'), end: isoTimestamp })).describe('One per hour of the range, oldest first; an hour without traffic is there with zeros'),
});
export type MetricsActivity = z.infer<typeof metricsActivity>;

export const metricsSummary = z.object({
  ...range,
  inbox_id: idSchema('inbox').nullable(),
  domain_id: idSchema('domain').nullable(),
  totals: metricsCounts,
  previous: z.object({ ...range, totals: metricsCounts }).describe('The period of the same length just before, for comparison'),
});
export type MetricsSummary = z.infer<typeof metricsSummary>;

const rate = z.number().min(0).nullable();

export const DELIVERABILITY_WARNINGS = ['complaint_rate', 'hard_bounce_rate'] as const;

export const metricsDeliverability = z.object({
  ...range,
  inbox_id: idSchema('inbox').nullable(),
  domain_id: idSchema('domain').nullable(),
  counts: metricsCounts,
  rates: z
    .object({
      delivery: rate.describe('delivered / sent'),
      hard_bounce: rate.describe('bounced_hard / sent'),
      soft_bounce: rate.describe('bounced_soft / sent'),
      complaint: rate.describe('complained / sent'),
      rejection: rate.describe('rejected / (sent + rejected)'),
    })
    .describe('Fractions (0.001 is 0.1%); null when nothing was sent (nor rejected, for rejection)'),
  latency_ms: z.object({
    count: count.describe('Deliveries with a processing time'),
    p50: z.number().nonnegative().nullable(),
    p95: z.number().nonnegative().nullable(),
  }),
  score: z.number().int().min(0).max(100).nullable().describe('0-100 from the rates (README, "Metrics"); null when nothing was sent nor rejected'),
  warnings: z.array(
    z.object({
      code: z.enum(DELIVERABILITY_WARNINGS),
      message: z.string(),
      rate: z.number(),
      threshold: z.number(),
      top_inboxes: z.array(z.object({ inbox_id: idSchema('inbox'), count, sent: count })).describe('The inboxes that contribute most, largest count first'),
    }),
  ),
});
export type MetricsDeliverability = z.infer<typeof metricsDeliverability>;

/** For services: an organization's messages in a period (every environment), from the rollups. */
export const metricsUsage = z.object({
  messages_sent: count.describe('message.sent events in the period'),
  messages_received: count.describe('message.received events in the period'),
});
export type MetricsUsage = z.infer<typeof metricsUsage>;
