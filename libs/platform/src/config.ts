/**
 * Configuration helpers: each service describes its environment with one zod schema and
 * parses it once, inside main(), from an env object passed in. Every problem is reported
 * in one error so a misconfigured deployment is fixed in one round.
 */
import { z } from 'zod';
import { DEVELOPMENT_ENCRYPTION_KEY } from './crypto';

export type Env = Record<string, string | undefined>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

export function parseConfig<S extends z.ZodType>(schema: S, env: Env): z.output<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  throw new ConfigError(
    result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`),
  );
}

/** Booleans are spelled out: true/false/1/0/yes/no; anything else is an error, never a silent false. */
export function envBool(defaultValue: boolean) {
  return z
    .enum(['true', 'false', '1', '0', 'yes', 'no', ''])
    .optional()
    .transform((v) => (v === undefined || v === '' ? defaultValue : v === 'true' || v === '1' || v === 'yes'));
}

export function envInt(defaultValue: number, opts: { min?: number; max?: number } = {}) {
  return z
    .string()
    .regex(/^-?\d+$/, 'must be an integer')
    .optional()
    .transform((v) => (v === undefined ? defaultValue : Number(v)))
    .pipe(z.number().int().min(opts.min ?? Number.MIN_SAFE_INTEGER).max(opts.max ?? Number.MAX_SAFE_INTEGER));
}

export function envString(defaultValue: string) {
  return z
    .string()
    .optional()
    .transform((v) => (v === undefined || v === '' ? defaultValue : v));
}

export function envUrl(defaultValue: string) {
  return envString(defaultValue).pipe(z.url());
}

export const logLevel = z
  .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  .optional()
  .transform((v) => v ?? 'info');

/** Settings every service shares, under the same variable names everywhere. */
export const commonEnv = {
  LOG_LEVEL: logLevel,
  DATABASE_URL: envUrl('postgres://postgres@127.0.0.1:5432/mailroom'),
  NATS_URL: envString('nats://127.0.0.1:4222'),
  /** Prefix of every subject and stream name, so several deployments (or test runs) share one NATS. */
  BUS_NAMESPACE: z
    .string()
    .regex(/^[a-z0-9_-]*$/i, 'letters, digits, _ and - only')
    .optional()
    .transform((v) => v ?? ''),
  /**
   * Directory holding `<service>.creds` (this service's NATS identity) and `context-signers`,
   * as written by `bus-credentials`. Required in production; unset elsewhere = anonymous.
   */
  NATS_CREDENTIALS_DIR: z
    .string()
    .optional()
    .transform((v) => v || undefined),
  /** Port of the liveness/readiness HTTP listener; 0 = none. */
  HEALTH_PORT: envInt(0, { min: 0, max: 65535 }),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
};

export const runtimeEnv = z
  .enum(['development', 'test', 'production'])
  .optional()
  .transform((v) => v ?? 'development');

/** SECRETS_ENCRYPTION_KEY: 32 random bytes, base64; empty counts as absent (see checkSecretsKey). */
export const secretsKeyField = z
  .string()
  .optional()
  .transform((v) => v || undefined);

/**
 * For the services that seal or key secrets with SECRETS_ENCRYPTION_KEY: required in
 * production (and not the development key there), 32 bytes when given. Absent elsewhere,
 * services use DEVELOPMENT_ENCRYPTION_KEY.
 */
export function checkSecretsKey(c: { MAILROOM_ENV: string; SECRETS_ENCRYPTION_KEY?: string | undefined }, ctx: z.RefinementCtx): void {
  if (!c.SECRETS_ENCRYPTION_KEY) {
    if (c.MAILROOM_ENV === 'production') ctx.addIssue({ code: 'custom', path: ['SECRETS_ENCRYPTION_KEY'], message: 'is required in production' });
  } else if (Buffer.from(c.SECRETS_ENCRYPTION_KEY, 'base64').length !== 32) {
    ctx.addIssue({ code: 'custom', path: ['SECRETS_ENCRYPTION_KEY'], message: 'must be 32 bytes, base64-encoded' });
  } else if (c.MAILROOM_ENV === 'production' && Buffer.from(c.SECRETS_ENCRYPTION_KEY, 'base64').equals(Buffer.from(DEVELOPMENT_ENCRYPTION_KEY, 'base64'))) {
    // It is in the repository: secrets sealed with it are as good as plain text.
    ctx.addIssue({ code: 'custom', path: ['SECRETS_ENCRYPTION_KEY'], message: 'must not be the development key in production' });
  }
}
