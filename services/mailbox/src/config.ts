import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { envInt, envString, parseConfig, type Env } from '@mailroom/platform';
import { baseEnv } from '@mailroom/runtime';
import { DOMAIN_PATTERN, SEND_MAX_MESSAGE_BYTES_DEFAULT } from '@mailroom/contracts';

export const mailboxConfigSchema = z.object({
  ...baseEnv,
  /** Domain of the addresses of new inboxes. */
  MAIL_DOMAIN: envString('mailroom.localhost').pipe(z.string().toLowerCase().regex(DOMAIN_PATTERN, 'must be a domain name')),
  /** Parse worker threads. */
  PARSE_WORKERS: envInt(Math.max(1, Math.min(4, availableParallelism())), { min: 1, max: 64 }),
  /** Time a message gets to be parsed before only its headers are read. */
  PARSE_TIMEOUT_MS: envInt(10_000, { min: 100 }),
  PARSE_MAX_HTML_BYTES: envInt(4 * 1024 * 1024, { min: 1024 }),
  PARSE_WORKER_HEAP_MB: envInt(512, { min: 64 }),
  /** Inbound work items processed at once by this instance. */
  INBOUND_CONCURRENCY: envInt(8, { min: 1, max: 256 }),
  /** The largest message a send may make, bodies and attachments decoded (the gateway reads the same variable for uploads). */
  SEND_MAX_MESSAGE_BYTES: envInt(SEND_MAX_MESSAGE_BYTES_DEFAULT, { min: 1024 }),
});

export type MailboxConfig = z.output<typeof mailboxConfigSchema>;

export function loadConfig(env: Env): MailboxConfig {
  return parseConfig(mailboxConfigSchema, env);
}
