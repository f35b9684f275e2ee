import { hostname } from 'node:os';
import { z } from 'zod';
import { envInt, envString, parseConfig, type Env } from '@mailroom/platform';
import { baseEnv } from '@mailroom/runtime';
import { DOMAIN_PATTERN } from '@mailroom/contracts';

const domainList = z
  .string()
  .optional()
  .transform((v) => (v ?? '').split(',').map((d) => d.trim().toLowerCase()).filter(Boolean))
  .pipe(z.array(z.string().regex(DOMAIN_PATTERN, 'must be domain names, comma-separated')));

const hostPortList = z
  .string()
  .optional()
  .transform((v) => (v ?? '').split(',').map((s) => s.trim()).filter(Boolean))
  .pipe(z.array(z.string().regex(/^(\[[0-9a-f:]+\]|[0-9.]+|[a-z0-9.-]+)(:\d{1,5})?$/i, 'must be host[:port] entries, comma-separated')));

const score = (dflt: number) =>
  z
    .string()
    .regex(/^-?\d+(\.\d+)?$/, 'must be a number')
    .optional()
    .transform((v) => (v === undefined ? dflt : Number(v)));

export const mailIngestConfigSchema = z
  .object({
    ...baseEnv,
    MAIL_DOMAIN: envString('mailroom.localhost').pipe(z.string().toLowerCase().regex(DOMAIN_PATTERN, 'must be a domain name')),
    /** More domains to accept mail for, besides MAIL_DOMAIN. */
    MAIL_EXTRA_DOMAINS: domainList,
    /** Domain of our VERP envelope senders (mail-send's BOUNCE_DOMAIN); default MAIL_DOMAIN. */
    BOUNCE_DOMAIN: z.string().toLowerCase().regex(DOMAIN_PATTERN, 'must be a domain name').optional(),
    SMTP_PORT: envInt(2525, { min: 0, max: 65535 }),
    SMTP_HOST: envString('0.0.0.0'),
    /** Our name in the greeting and EHLO, and the authserv-id of authentication results (a host name). */
    SMTP_HOSTNAME: envString(hostname()).pipe(
      z.string().regex(/^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i, 'must be a host name'),
    ),
    SMTP_MAX_MESSAGE_BYTES: envInt(25 * 1024 * 1024, { min: 1024 }),
    /** Messages up to this size travel inside the mail.inbound work item; larger ones go to the object store first. */
    SMTP_INLINE_RAW_MAX_BYTES: envInt(256 * 1024, { min: 0, max: 700 * 1024 }),
    SMTP_MAX_RECIPIENTS: envInt(100, { min: 1, max: 1000 }),
    SMTP_MAX_CLIENTS: envInt(1000, { min: 1 }),
    SMTP_MAX_CONNECTIONS_PER_IP: envInt(20, { min: 1 }),
    /** 0 = no limit. */
    SMTP_MAX_MESSAGES_PER_MINUTE_PER_IP: envInt(600, { min: 0 }),
    SMTP_SOCKET_TIMEOUT_MS: envInt(60_000, { min: 1_000 }),
    /** PEM files; STARTTLS is offered only when both are set. */
    SMTP_TLS_CERT_FILE: z.string().optional(),
    SMTP_TLS_KEY_FILE: z.string().optional(),
    /** How long a recipient lookup (found or not) is trusted. */
    RCPT_CACHE_TTL_MS: envInt(5_000, { min: 0, max: 60_000 }),
    /** How long what the domains service said about a custom domain is kept; a fact that the domain changed drops it sooner. */
    DOMAIN_ROUTE_CACHE_TTL_MS: envInt(300_000, { min: 1, max: 3_600_000 }),
    /** Resolvers for SPF/DKIM/DMARC/ARC, host[:port] comma-separated; default: the system's. */
    DNS_SERVERS: hostPortList,
    DNS_TIMEOUT_MS: envInt(5_000, { min: 100 }),
    /** Bound on all authentication checks of one message; past it they are temperror. */
    AUTH_TIMEOUT_MS: envInt(15_000, { min: 100 }),
    /** rspamd's normal worker; `off` = no spam scanning (messages are marked unscanned). */
    RSPAMD_URL: envString('http://127.0.0.1:11333')
      .pipe(z.union([z.literal('off'), z.url()]))
      .transform((v) => (v === 'off' ? null : v)),
    RSPAMD_TIMEOUT_MS: envInt(5_000, { min: 100 }),
    SPAM_SCORE: score(6),
    SPAM_REJECT_SCORE: score(15),
  })
  .transform((c) => ({ ...c, BOUNCE_DOMAIN: c.BOUNCE_DOMAIN ?? c.MAIL_DOMAIN }))
  .superRefine((c, ctx) => {
    if (Boolean(c.SMTP_TLS_CERT_FILE) !== Boolean(c.SMTP_TLS_KEY_FILE)) {
      ctx.addIssue({ code: 'custom', path: ['SMTP_TLS_CERT_FILE'], message: 'SMTP_TLS_CERT_FILE and SMTP_TLS_KEY_FILE go together' });
    }
    if (c.SPAM_REJECT_SCORE < c.SPAM_SCORE) {
      ctx.addIssue({ code: 'custom', path: ['SPAM_REJECT_SCORE'], message: 'must not be below SPAM_SCORE' });
    }
  });

export type MailIngestConfig = z.output<typeof mailIngestConfigSchema>;

export function loadConfig(env: Env): MailIngestConfig {
  return parseConfig(mailIngestConfigSchema, env);
}
