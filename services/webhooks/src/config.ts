import { z } from 'zod';
import { DEVELOPMENT_ENCRYPTION_KEY, checkSecretsKey, envInt, envString, parseConfig, secretsKeyField, type Env } from '@mailroom/platform';
import { baseEnv } from '@mailroom/runtime';
import { parseCidr } from './domain/ip-policy';
import { DEFAULT_RETRY_SCHEDULE_SECONDS, parseRetrySchedule } from './domain/retry-policy';

/** The spec's acknowledgement time of a receiver: 30 s. */
export const RECEIVER_DEADLINE_MS = 30_000;

export const webhooksConfigSchema = z
  .object({
    ...baseEnv,
    /** 32 random bytes, base64: seals endpoint secrets at rest. Required in production. */
    SECRETS_ENCRYPTION_KEY: secretsKeyField,
    /**
     * Address ranges deliveries may reach although they are not public (comma-separated
     * CIDRs, e.g. 127.0.0.1/32 for a receiver on this machine). Empty: only public addresses.
     */
    WEBHOOK_ALLOWED_CIDRS: envString(''),
    /** Delays in seconds before attempts 2, 3, ... (comma-separated); default 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h. */
    WEBHOOK_RETRY_SCHEDULE: envString(DEFAULT_RETRY_SCHEDULE_SECONDS.join(',')),
    /** The one deadline of an attempt (connect, TLS, response). The spec's 30 s; lower only in tests. */
    WEBHOOK_TIMEOUT_MS: envInt(RECEIVER_DEADLINE_MS, { min: 100, max: RECEIVER_DEADLINE_MS }),
    /** Requests in flight at once from one instance, all endpoints together. */
    WEBHOOK_MAX_IN_FLIGHT: envInt(256, { min: 4, max: 10_000 }),
    /** How long a claimed delivery stays this instance's without renewal: how soon another takes over after a crash. */
    WEBHOOK_LEASE_SECONDS: envInt(30, { min: 1, max: 3_600 }),
    /** How often an idle instance looks for due deliveries (new ones wake it at once). */
    WEBHOOK_POLL_INTERVAL_MS: envInt(1_000, { min: 10, max: 60_000 }),
    /** Endpoints one environment may have: each event is fanned out to every one of them. */
    WEBHOOK_MAX_ENDPOINTS: envInt(50, { min: 1, max: 10_000 }),
    /** On SIGTERM, how long attempts in flight may take to finish before they are cut short and handed back. */
    WEBHOOK_SHUTDOWN_GRACE_MS: envInt(8_000, { min: 0, max: 60_000 }),
  })
  .superRefine((c, ctx) => {
    checkSecretsKey(c, ctx);
    for (const cidr of c.WEBHOOK_ALLOWED_CIDRS.split(',').map((s) => s.trim()).filter(Boolean)) {
      if (!parseCidr(cidr)) ctx.addIssue({ code: 'custom', path: ['WEBHOOK_ALLOWED_CIDRS'], message: `${cidr} is not an address range (e.g. 127.0.0.1/32)` });
    }
    if (!parseRetrySchedule(c.WEBHOOK_RETRY_SCHEDULE)) {
      ctx.addIssue({ code: 'custom', path: ['WEBHOOK_RETRY_SCHEDULE'], message: 'must be 1 to 20 comma-separated positive whole seconds' });
    }
  })
  .transform((c) => ({
    ...c,
    SECRETS_ENCRYPTION_KEY: c.SECRETS_ENCRYPTION_KEY ?? DEVELOPMENT_ENCRYPTION_KEY,
    allowedCidrs: c.WEBHOOK_ALLOWED_CIDRS.split(',').map((s) => s.trim()).filter(Boolean),
    retrySchedule: parseRetrySchedule(c.WEBHOOK_RETRY_SCHEDULE) ?? [...DEFAULT_RETRY_SCHEDULE_SECONDS],
  }));

export type WebhooksConfig = z.output<typeof webhooksConfigSchema>;

export function loadConfig(env: Env): WebhooksConfig {
  return parseConfig(webhooksConfigSchema, env);
}
