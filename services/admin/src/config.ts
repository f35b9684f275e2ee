import { z } from 'zod';
import { envInt, envString, parseConfig, type Env } from '@mailroom/platform';
import { baseEnv } from '@mailroom/runtime';

/** The services a complete deployment runs (contracts BUS_IDENTITIES but the migrate step). */
export const ALL_SERVICES = ['orgs', 'auth', 'mailbox', 'mail-ingest', 'mail-send', 'webhooks', 'domains', 'metrics', 'admin', 'gateway'] as const;

export const adminConfigSchema = z.object({
  ...baseEnv,
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
});

export type AdminConfig = z.output<typeof adminConfigSchema>;

export function loadConfig(env: Env): AdminConfig {
  return parseConfig(adminConfigSchema, env);
}
