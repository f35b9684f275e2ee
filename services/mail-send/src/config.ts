import { z } from 'zod';
import { DEVELOPMENT_ENCRYPTION_KEY, envInt, envString, parseConfig, type Env } from '@mailroom/platform';
import { baseEnv } from '@mailroom/runtime';
import { DOMAIN_PATTERN } from '@mailroom/contracts';

const domainName = z.string().toLowerCase().regex(DOMAIN_PATTERN, 'must be a domain name');

export const sendConfigSchema = z
  .object({
    ...baseEnv,
    MAIL_DOMAIN: envString('mailroom.localhost').pipe(domainName),
    /** Where delivery and complaint reports come back: the envelope sender's domain (VERP). Default: MAIL_DOMAIN. */
    BOUNCE_DOMAIN: domainName.optional(),
    /** smtp (a relay, any smarthost) is the only provider so far. */
    MAIL_PROVIDER: z.enum(['smtp']).optional().transform((v) => v ?? 'smtp'),
    /** The relay: smtp://host:port (smtps:// for implicit TLS); credentials in the URL when it needs them. */
    SMTP_RELAY_URL: envString('smtp://127.0.0.1:25').pipe(z.url()),
    /** DKIM signing of MAIL_DOMAIN's mail: PEM private key (RSA 2048 or ed25519) and selector. */
    DKIM_PRIVATE_KEY: z.string().optional(),
    DKIM_SELECTOR: envString('mailroom').pipe(z.string().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/i, 'must be a DNS label')),
    /** Sends allowed per inbox and per organization in any minute (0 = no limit). */
    SEND_RATE_PER_INBOX_PER_MINUTE: envInt(120, { min: 0 }),
    SEND_RATE_PER_ORG_PER_MINUTE: envInt(1200, { min: 0 }),
    /** Outbound messages handed to the provider at once by this instance. */
    OUTBOUND_CONCURRENCY: envInt(16, { min: 1, max: 256 }),
    /** Seals nothing here: keys the VERP tokens so a forged report cannot name our messages. Required in production. */
    SECRETS_ENCRYPTION_KEY: z.string().optional(),
  })
  .superRefine((c, ctx) => {
    if (c.MAILROOM_ENV === 'production') {
      if (!c.SECRETS_ENCRYPTION_KEY) ctx.addIssue({ code: 'custom', path: ['SECRETS_ENCRYPTION_KEY'], message: 'is required in production' });
      if (!c.DKIM_PRIVATE_KEY) ctx.addIssue({ code: 'custom', path: ['DKIM_PRIVATE_KEY'], message: 'is required in production (unsigned mail is junked)' });
    }
  })
  .transform((c) => ({ ...c, BOUNCE_DOMAIN: c.BOUNCE_DOMAIN ?? c.MAIL_DOMAIN, SECRETS_ENCRYPTION_KEY: c.SECRETS_ENCRYPTION_KEY ?? DEVELOPMENT_ENCRYPTION_KEY }));

export type SendConfig = z.output<typeof sendConfigSchema>;

export function loadConfig(env: Env): SendConfig {
  return parseConfig(sendConfigSchema, env);
}
