import { z } from 'zod';
import { DOMAIN_PATTERN } from '@mailroom/contracts';
import { DEVELOPMENT_ENCRYPTION_KEY, checkSecretsKey, envInt, envString, parseConfig, secretsKeyField, type Env } from '@mailroom/platform';
import { baseEnv } from '@mailroom/runtime';

const hostName = (what: string) => z.string().toLowerCase().regex(DOMAIN_PATTERN, `must be ${what} (a host name)`);
const optionalHost = (what: string) =>
  z
    .string()
    .optional()
    .transform((v) => v || undefined)
    .pipe(hostName(what).optional());

const hostPortList = z
  .string()
  .optional()
  .transform((v) => (v ?? '').split(',').map((s) => s.trim()).filter(Boolean))
  .pipe(z.array(z.string().regex(/^(\[[0-9a-f:]+\]|[0-9.]+|[a-z0-9.-]+)(:\d{1,5})?$/i, 'must be host[:port] entries, comma-separated')));

export const domainsConfigSchema = z
  .object({
    ...baseEnv,
    /** 32 random bytes, base64: seals the domains' DKIM private keys at rest. Required in production. */
    SECRETS_ENCRYPTION_KEY: secretsKeyField,
    /** The platform's own mail domain: never a customer's. */
    MAIL_DOMAIN: envString('mailroom.localhost').pipe(hostName('a domain name')),
    /** Our inbound host, which customers' MX records name; default MAIL_DOMAIN. */
    DOMAIN_MX_HOST: optionalHost('the inbound mail host'),
    /** The name customers' SPF records include (`include:<it>`), where our sending addresses are published; default `_spf.<MAIL_DOMAIN>`. */
    DOMAIN_SPF_INCLUDE: optionalHost('the SPF include name'),
    /** Address DMARC aggregate reports go to (`rua=mailto:`) in the recommended DMARC record; empty: none. */
    DOMAIN_DMARC_RUA: envString('').pipe(z.union([z.literal(''), z.email('must be an email address')])),
    /** Our bounce domain (mail-send's and mail-ingest's BOUNCE_DOMAIN): `bounces.<domain>` is a CNAME to it; default MAIL_DOMAIN. */
    BOUNCE_DOMAIN: optionalHost('the bounce domain'),
    /** Resolvers of the checks, host[:port] comma-separated; default: the system's. */
    DNS_SERVERS: hostPortList,
    DNS_TIMEOUT_MS: envInt(5_000, { min: 100 }),
    /** How often an instance looks for domains due for a check. */
    DOMAIN_CHECK_INTERVAL_MS: envInt(30_000, { min: 50, max: 3_600_000 }),
    /** The first retry of a domain that did not verify; doubles with each check in a row that did not, up to DOMAIN_CHECK_BACKOFF_MAX_SECONDS. */
    DOMAIN_CHECK_BACKOFF_SECONDS: envInt(60, { min: 1, max: 86_400 }),
    DOMAIN_CHECK_BACKOFF_MAX_SECONDS: envInt(6 * 3_600, { min: 1, max: 7 * 86_400 }),
    /** How often a verified domain is checked again. */
    DOMAIN_RECHECK_INTERVAL_SECONDS: envInt(6 * 3_600, { min: 1, max: 7 * 86_400 }),
  })
  .superRefine((c, ctx) => {
    checkSecretsKey(c, ctx);
    if (c.DOMAIN_CHECK_BACKOFF_MAX_SECONDS < c.DOMAIN_CHECK_BACKOFF_SECONDS) {
      ctx.addIssue({ code: 'custom', path: ['DOMAIN_CHECK_BACKOFF_MAX_SECONDS'], message: 'must not be below DOMAIN_CHECK_BACKOFF_SECONDS' });
    }
  })
  .transform((c) => ({
    ...c,
    SECRETS_ENCRYPTION_KEY: c.SECRETS_ENCRYPTION_KEY ?? DEVELOPMENT_ENCRYPTION_KEY,
    records: {
      mxHost: c.DOMAIN_MX_HOST ?? c.MAIL_DOMAIN,
      spfInclude: c.DOMAIN_SPF_INCLUDE ?? `_spf.${c.MAIL_DOMAIN}`,
      dmarcRua: c.DOMAIN_DMARC_RUA || null,
      bounceTarget: c.BOUNCE_DOMAIN ?? c.MAIL_DOMAIN,
    },
    schedule: {
      backoffBaseMs: c.DOMAIN_CHECK_BACKOFF_SECONDS * 1000,
      backoffMaxMs: c.DOMAIN_CHECK_BACKOFF_MAX_SECONDS * 1000,
      recheckMs: c.DOMAIN_RECHECK_INTERVAL_SECONDS * 1000,
    },
  }));

export type DomainsConfig = z.output<typeof domainsConfigSchema>;

export function loadConfig(env: Env): DomainsConfig {
  return parseConfig(domainsConfigSchema, env);
}
