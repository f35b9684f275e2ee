/**
 * The platform's health as the operator reads it (issue 28, parts 2 and 3): each service's
 * instances (found by the discovery ping every instance answers), PostgreSQL, NATS and
 * JetStream, rspamd and the send relay, one overall status with its reasons; samples of it
 * over time; and the alerts evaluated on each sample.
 */
import { z } from 'zod';
import { pageOf, pageQuery } from '../pagination';
import { isoTimestamp } from '../time';

/**
 * Core NATS subject (un-prefixed) every instance of every service answers, outside any queue
 * group, with `instanceInfo`: who is running, since when, which version.
 */
export const DISCOVERY_SUBJECT = 'discovery.ping';

export const instanceInfo = z.object({
  service: z.string().min(1).max(64),
  /** Random per process start. */
  instance_id: z.string().min(1).max(64),
  version: z.string().max(64),
  started_at: isoTimestamp,
});
export type InstanceInfo = z.infer<typeof instanceInfo>;

export const HEALTH_STATUSES = ['ok', 'degraded', 'down'] as const;
export const healthStatus = z.enum(HEALTH_STATUSES);
export type HealthStatus = z.infer<typeof healthStatus>;

/** Why the status is not ok: which part, how bad, what was seen. */
export const healthReason = z.object({ component: z.string(), status: z.enum(['degraded', 'down']), message: z.string() });
export type HealthReason = z.infer<typeof healthReason>;

const check = { reachable: z.boolean(), error: z.string().nullable() };

export const healthReport = z.object({
  status: healthStatus,
  reasons: z.array(healthReason),
  checked_at: isoTimestamp,
  services: z.array(
    z.object({
      name: z.string(),
      status: z.enum(['up', 'down']),
      instances: z.array(z.object({ instance_id: z.string(), version: z.string(), started_at: isoTimestamp, uptime_seconds: z.number().int().min(0) })),
    }),
  ),
  postgres: z.object({ ...check, replication_lag_seconds: z.number().nullable() }),
  nats: z.object({
    ...check,
    jetstream: z.object({
      ...check,
      storage_bytes: z.number().nullable(),
      max_storage_bytes: z.number().nullable(),
      streams: z.array(z.object({ name: z.string(), messages: z.number(), bytes: z.number() })),
      consumers: z.array(z.object({ stream: z.string(), name: z.string(), pending: z.number(), ack_pending: z.number(), redelivered: z.number() })),
    }),
  }),
  /** null: spam scanning is off (RSPAMD_URL=off). */
  rspamd: z.object(check).nullable(),
  /** The SMTP relay mail-send hands mail to; null when mail goes through a provider's API (MAIL_PROVIDER=ses). */
  relay: z.object({ ...check, host: z.string(), port: z.number().int() }).nullable(),
});
export type HealthReport = z.infer<typeof healthReport>;

/** A range of samples: from (inclusive) and to (exclusive), oldest first; at most 31 days apart (the admin service checks the range). */
export const healthHistoryQuery = z
  .strictObject({
    from: isoTimestamp.optional(),
    to: isoTimestamp.optional(),
    /** Only the samples whose status differs from the one before. */
    changes_only: z.enum(['true', 'false']).optional(),
    ...pageQuery.shape,
  });

export const healthSample = z.object({
  id: z.string(),
  taken_at: isoTimestamp,
  status: healthStatus,
  /** The status of the sample before; null for the first. */
  previous_status: healthStatus.nullable(),
  /** The status changed at this sample. */
  status_changed: z.boolean(),
  reasons: z.array(healthReason),
});
export const healthHistory = pageOf(healthSample);

/** For admin's alerts (services only): what happened on the whole platform since a time. */
export const platformSinceRequest = z.object({ since: isoTimestamp });
/** metrics: mail of every organization since the hour `since` falls in (hourly rollups). */
export const platformMail = z.object({ sent: z.number().int().min(0), bounced_hard: z.number().int().min(0), bounced_soft: z.number().int().min(0), complained: z.number().int().min(0) });
/** webhooks: endpoints auto-disabled (50 failures in a row) since; domains: custom domains failing verification, checked since. */
export const platformCount = z.object({ count: z.number().int().min(0) });

/** Alert rules, by key. */
export const ALERT_KEYS = [
  'service_down',
  'consumer_lag',
  'bounce_rate',
  'complaint_rate',
  'webhook_endpoint_disabled',
  'domain_verification_failed',
  'relay_unreachable',
  'disk_usage',
] as const;
export type AlertKey = (typeof ALERT_KEYS)[number];

const ratio = z.number().min(0, 'must be between 0 and 1').max(1, 'must be between 0 and 1');
const count = (min: number) => z.number().int('must be an integer').min(min, `must be at least ${min}`).max(1_000_000_000);

/** Each rule's thresholds (all of them, as stored and shown); a change gives some of them. */
export const ALERT_THRESHOLDS = {
  /** Fires when a service has fewer instances than this. */
  service_down: z.strictObject({ min_instances: count(1) }),
  /** Fires when a durable consumer has more messages waiting than this. */
  consumer_lag: z.strictObject({ max_pending: count(1) }),
  /** Fires when the share of sent mail that bounced over the window is above this (with at least min_sent sent). */
  bounce_rate: z.strictObject({ max_rate: ratio, window_hours: count(1).max(720), min_sent: count(1) }),
  complaint_rate: z.strictObject({ max_rate: ratio, window_hours: count(1).max(720), min_sent: count(1) }),
  /** Fires when more webhook endpoints than this were auto-disabled over the window. */
  webhook_endpoint_disabled: z.strictObject({ max_disabled: count(0), window_hours: count(1).max(720) }),
  /** Fires when more custom domains than this fail verification (status failed, checked within the window). */
  domain_verification_failed: z.strictObject({ max_failed: count(0), window_hours: count(1).max(720) }),
  /** Fires after this many consecutive failed checks of the send relay. */
  relay_unreachable: z.strictObject({ failed_checks: count(1) }),
  /** Fires when JetStream's storage is fuller than this share of its limit. */
  disk_usage: z.strictObject({ max_ratio: ratio }),
} as const satisfies Record<AlertKey, z.ZodObject>;
export type AlertThresholds = { [K in AlertKey]: z.infer<(typeof ALERT_THRESHOLDS)[K]> };

export const DEFAULT_ALERT_THRESHOLDS: AlertThresholds = {
  service_down: { min_instances: 1 },
  consumer_lag: { max_pending: 1000 },
  bounce_rate: { max_rate: 0.05, window_hours: 24, min_sent: 100 },
  complaint_rate: { max_rate: 0.001, window_hours: 24, min_sent: 100 },
  webhook_endpoint_disabled: { max_disabled: 0, window_hours: 24 },
  domain_verification_failed: { max_failed: 0, window_hours: 24 },
  relay_unreachable: { failed_checks: 2 },
  disk_usage: { max_ratio: 0.8 },
};

export const ALERT_STATES = ['ok', 'firing', 'acknowledged', 'muted'] as const;
export const alertState = z.enum(ALERT_STATES);
export type AlertState = z.infer<typeof alertState>;

export const alertTransition = z.object({ from: alertState, to: alertState, at: isoTimestamp, reason: z.string() });

export const alert = z.object({
  key: z.enum(ALERT_KEYS),
  description: z.string(),
  state: alertState,
  /** Whether the rule's condition holds at the last evaluation (muted or acknowledged alerts too). */
  condition_met: z.boolean(),
  /** What the last evaluation saw, in words; null before the first. */
  detail: z.string().nullable(),
  thresholds: z.record(z.string(), z.number()),
  muted_until: isoTimestamp.nullable(),
  acknowledged_at: isoTimestamp.nullable(),
  last_fired_at: isoTimestamp.nullable(),
  last_resolved_at: isoTimestamp.nullable(),
  evaluated_at: isoTimestamp.nullable(),
  /** The last transitions, newest first (at most 20). */
  transitions: z.array(alertTransition),
});
export type Alert = z.infer<typeof alert>;
export const alertList = z.object({ data: z.array(alert) });

export const alertKeyParam = z.object({ key: z.string().min(1).max(64) });

/** What an operator changes: acknowledge a firing alert, mute until a time (null: unmute), change thresholds. */
const alertUpdateFields = z.strictObject({
  acknowledge: z.literal(true).optional(),
  mute_until: isoTimestamp.nullable().optional(),
  /** Some of the rule's thresholds (ALERT_THRESHOLDS); checked against the rule's own schema. */
  thresholds: z.record(z.string(), z.number()).optional(),
});
export const alertUpdateBody = alertUpdateFields.refine((b) => b.acknowledge !== undefined || b.mute_until !== undefined || b.thresholds !== undefined, {
  message: 'give acknowledge: true, mute_until (a time, or null to unmute) or thresholds',
});
export const alertUpdateRequest = alertUpdateFields.extend(alertKeyParam.shape);
