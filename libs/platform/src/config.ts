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

/** A file path that may be left out; empty counts as unset (a Kubernetes or compose variable kept but blanked). */
const optionalPath = z
  .string()
  .optional()
  .transform((v) => v || undefined);

export const logLevel = z
  .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  .optional()
  .transform((v) => v ?? 'info');

/** Settings every service shares, under the same variable names everywhere. */
export const commonEnv = {
  LOG_LEVEL: logLevel,
  DATABASE_URL: envUrl('postgres://postgres@127.0.0.1:5432/mailroom'),
  /** The launcher's NATS by default (`npm start`), not a machine's anonymous one on 4222. */
  NATS_URL: envString('nats://127.0.0.1:14222'),
  /** Prefix of every subject and stream name, so several deployments (or test runs) share one NATS. */
  BUS_NAMESPACE: z
    .string()
    .regex(/^[a-z0-9_-]*$/i, 'letters, digits, _ and - only')
    .optional()
    .transform((v) => v ?? ''),
  /**
   * Directory holding `<service>.creds` (this service's NATS identity), `<service>.seal-key`
   * and `<service>.subject-keys`,
   * as written by `bus-credentials`. Required in production; unset elsewhere = anonymous.
   */
  NATS_CREDENTIALS_DIR: z
    .string()
    .optional()
    .transform((v) => v || undefined),
  /** Port of the liveness/readiness HTTP listener; 0 = none. */
  HEALTH_PORT: envInt(0, { min: 0, max: 65535 }),
  /** OTLP/HTTP collector; unset or empty: tracing off (docker-compose passes it empty unless its observability env file sets it). */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.preprocess((v) => (v === '' ? undefined : v), z.string().url().optional()),
  /** `true`: database queries outside any span (idle polling) are traced, each as a trace of its own; off by default. */
  OTEL_TRACE_ROOT_QUERIES: z.enum(['true', 'false']).default('false'),
  /** PEM CA that signed the NATS server's certificate (else the system's CAs). Setting it, or a tls:// URL, requires TLS. */
  NATS_TLS_CA_FILE: optionalPath,
  /** A client certificate and its key (PEM), for a server that verifies clients: both or neither (checkBusSettings). */
  NATS_TLS_CERT_FILE: optionalPath,
  NATS_TLS_KEY_FILE: optionalPath,
};

/**
 * Problems in the NATS TLS settings that span two variables, so no one field's schema sees
 * them: a certificate without its key (or the reverse) cannot be presented. Read from the raw
 * environment, where empty counts as unset as in the fields above.
 */
export function checkBusSettings(env: Env): string[] {
  const cert = Boolean(env.NATS_TLS_CERT_FILE);
  const key = Boolean(env.NATS_TLS_KEY_FILE);
  const problems: string[] = [];
  if (cert && !key) problems.push('NATS_TLS_KEY_FILE: is required with NATS_TLS_CERT_FILE (a client certificate needs its key)');
  if (key && !cert) problems.push('NATS_TLS_CERT_FILE: is required with NATS_TLS_KEY_FILE (a client key needs its certificate)');
  // Every service connects to NATS as itself in production (deploy/README.md, "Bus credentials").
  if (env.MAILROOM_ENV === 'production' && !env.NATS_CREDENTIALS_DIR) problems.push('NATS_CREDENTIALS_DIR: is required in production (each service connects to NATS with its own credentials)');
  return problems;
}

/** The NATS client's TLS files from a parsed configuration, or undefined when none is set. */
export function natsTlsFiles(c: { NATS_TLS_CA_FILE?: string | undefined; NATS_TLS_CERT_FILE?: string | undefined; NATS_TLS_KEY_FILE?: string | undefined }):
  | { caFile?: string; certFile?: string; keyFile?: string }
  | undefined {
  if (!c.NATS_TLS_CA_FILE && !c.NATS_TLS_CERT_FILE && !c.NATS_TLS_KEY_FILE) return undefined;
  return {
    ...(c.NATS_TLS_CA_FILE ? { caFile: c.NATS_TLS_CA_FILE } : {}),
    ...(c.NATS_TLS_CERT_FILE ? { certFile: c.NATS_TLS_CERT_FILE } : {}),
    ...(c.NATS_TLS_KEY_FILE ? { keyFile: c.NATS_TLS_KEY_FILE } : {}),
  };
}

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
