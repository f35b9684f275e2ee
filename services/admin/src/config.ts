import { z } from 'zod';
import { envInt, envString, parseCidr, parseConfig, type Env } from '@mailroom/platform';
import { baseEnv } from '@mailroom/runtime';

/** The services a complete deployment runs (contracts BUS_IDENTITIES but the migrate step). */
export const ALL_SERVICES = ['orgs', 'auth', 'mailbox', 'mail-ingest', 'mail-send', 'webhooks', 'domains', 'metrics', 'admin', 'gateway'] as const;

export const adminConfigSchema = z.object({
  ...baseEnv,
  /** How often audit entries older than a year are deleted. */
  AUDIT_PURGE_INTERVAL_MS: envInt(3_600_000, { min: 1_000 }),
  // Organization exports (issue 28, part 4).
  /** Export jobs one instance runs at once; more wait queued. */
  EXPORT_CONCURRENCY: envInt(2, { min: 1, max: 16 }),
  /** Rows asked of a service per page (memory holds one page at a time). */
  EXPORT_PAGE_SIZE: envInt(100, { min: 1, max: 200 }),
  /** How often the purge runs: expired archives deleted, exports whose instance died failed. */
  EXPORT_SWEEP_INTERVAL_SECONDS: envInt(60, { min: 1, max: 3_600 }),
  /** A queued or running export whose heartbeat is this old is failed by the purge (its instance stopped); heartbeats are sent every quarter of it. */
  EXPORT_STALE_AFTER_SECONDS: envInt(120, { min: 8, max: 86_400 }),
  /** How often the platform's health is sampled into its history (and alerts evaluated). */
  HEALTH_SAMPLE_INTERVAL_MS: envInt(60_000, { min: 1_000, max: 3_600_000 }),
  /** How long samples and alert transitions are kept. */
  HEALTH_RETENTION_DAYS: envInt(30, { min: 1, max: 3_650 }),
  /** The services health expects at least one instance of (comma-separated); a missing one makes it degraded. */
  HEALTH_EXPECTED_SERVICES: envString(ALL_SERVICES.join(',')).transform((v) =>
    v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  ),
  /** A standby further behind than this makes health degraded. */
  HEALTH_MAX_REPLICATION_LAG_SECONDS: envInt(30, { min: 1 }),
  /** A durable consumer with more messages waiting than this makes health degraded. */
  HEALTH_MAX_CONSUMER_PENDING: envInt(10_000, { min: 1 }),
  /** rspamd, as mail-ingest uses it; `off`: spam scanning is off, and not checked. */
  RSPAMD_URL: envString('http://127.0.0.1:11333')
    .pipe(z.union([z.literal('off'), z.url()]))
    .transform((v) => (v === 'off' ? null : v)),
  /** How mail-send sends (smtp: its relay is checked; ses: no relay). */
  MAIL_PROVIDER: z.enum(['smtp', 'ses']).optional().transform((v) => v ?? 'smtp'),
  /** mail-send's relay (smtp:// or smtps://): health connects to it and reads its greeting. */
  SMTP_RELAY_URL: envString('smtp://127.0.0.1:25').pipe(z.url()),
  /** Where firing alerts are mailed (comma-separated addresses); empty: no mail. */
  ALERT_EMAIL_TO: envString('').transform((v) =>
    v
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  ).pipe(z.array(z.email('must be email addresses, comma-separated')).max(20)),
  /** Where firing and cleared alerts are POSTed, signed with ALERT_WEBHOOK_SECRET; unset: no webhook. */
  ALERT_WEBHOOK_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** The key of the webhook's signature (x-service-signature, as tenant webhooks); required with ALERT_WEBHOOK_URL. */
  ALERT_WEBHOOK_SECRET: z.string().min(16, 'at least 16 characters').optional(),
  /** Ranges the webhook may reach although not public (development and tests only), comma-separated CIDRs. */
  ALERT_WEBHOOK_ALLOWED_CIDRS: envString('').transform((v) =>
    v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  ),
  ALERT_WEBHOOK_TIMEOUT_MS: envInt(10_000, { min: 100, max: 30_000 }),
}).superRefine((c, ctx) => {
  if (c.ALERT_WEBHOOK_URL && !c.ALERT_WEBHOOK_SECRET) ctx.addIssue({ code: 'custom', path: ['ALERT_WEBHOOK_SECRET'], message: 'required with ALERT_WEBHOOK_URL' });
  for (const cidr of c.ALERT_WEBHOOK_ALLOWED_CIDRS) if (!parseCidr(cidr)) ctx.addIssue({ code: 'custom', path: ['ALERT_WEBHOOK_ALLOWED_CIDRS'], message: `not a CIDR range: ${cidr}` });
});

export type AdminConfig = z.output<typeof adminConfigSchema>;

export function loadConfig(env: Env): AdminConfig {
  return parseConfig(adminConfigSchema, env);
}
