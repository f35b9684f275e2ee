import { z } from 'zod';
import { createPrivateKey } from 'node:crypto';
import { DEVELOPMENT_ENCRYPTION_KEY, checkSecretsKey, envInt, envString, parseConfig, secretsKeyField, type Env } from '@mailroom/platform';
import { baseEnv } from '@mailroom/runtime';
import { DOMAIN_PATTERN } from '@mailroom/contracts';

const domainName = z.string().toLowerCase().regex(DOMAIN_PATTERN, 'must be a domain name');

/** Why a DKIM signing key is unusable (not a PEM private key, RSA under 2048 bits, another type), or undefined. */
export function dkimKeyProblem(pem: string): string | undefined {
  let key;
  try {
    key = createPrivateKey(pem);
  } catch {
    return 'is not a PEM private key';
  }
  if (key.asymmetricKeyType === 'ed25519') return undefined;
  if (key.asymmetricKeyType !== 'rsa') return `is a ${key.asymmetricKeyType ?? 'unknown'} key; DKIM signs with RSA (2048 bits or more) or ed25519`;
  if ((key.asymmetricKeyDetails?.modulusLength ?? 0) < 2048) return `is RSA of ${key.asymmetricKeyDetails?.modulusLength} bits; at least 2048`;
  return undefined;
}

export const mailSendConfigSchema = z
  .object({
    ...baseEnv,
    MAIL_DOMAIN: envString('mailroom.localhost').pipe(domainName),
    /** Where delivery and complaint reports come back: the envelope sender's domain (VERP). Default: MAIL_DOMAIN. */
    BOUNCE_DOMAIN: domainName.optional(),
    /** smtp: a relay (any smarthost), reports by SMTP to BOUNCE_DOMAIN; ses: Amazon SES's API, reports by SNS. */
    MAIL_PROVIDER: z.enum(['smtp', 'ses']).optional().transform((v) => v ?? 'smtp'),
    /** SES: region, and optionally another endpoint (an emulator) and the configuration set that publishes events to SNS. Credentials: the AWS SDK's usual chain (AWS_ACCESS_KEY_ID..., instance role). */
    SES_REGION: z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d$/, 'an AWS region such as eu-west-1').optional(),
    SES_ENDPOINT: z.url().optional(),
    SES_CONFIGURATION_SET: z.string().min(1).max(64).optional(),
    /** Static credentials for SES (both or neither); absent: the AWS SDK's chain (environment, instance or task role). */
    SES_ACCESS_KEY_ID: z.string().min(1).optional(),
    SES_SECRET_ACCESS_KEY: z.string().min(1).optional(),
    /** SNS topics (ARNs, comma-separated) whose notifications the provider endpoint accepts; empty: it accepts none. */
    SES_SNS_TOPIC_ARNS: envString('').transform((v) => v.split(',').map((t) => t.trim()).filter(Boolean)),
    /** Also trusted for SNS certificates and subscription URLs: URLs starting with this (an SNS emulator, tests). */
    SNS_TRUSTED_URL_PREFIX: envString(''),
    /** The relay: smtp://host:port (smtps:// for implicit TLS); credentials in the URL when it needs them. */
    SMTP_RELAY_URL: envString('smtp://127.0.0.1:25').pipe(z.url()),
    /** DKIM signing of MAIL_DOMAIN's mail: PEM private key (RSA 2048 or ed25519) and selector. */
    DKIM_PRIVATE_KEY: z.string().optional(),
    DKIM_SELECTOR: envString('mailroom').pipe(z.string().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/i, 'must be a DNS label')),
    /** Mail from the platform itself (invitations, ownership transfers) is from this address, on MAIL_DOMAIN. Default: no-reply@MAIL_DOMAIN. */
    SYSTEM_MAIL_FROM: z.string().trim().toLowerCase().pipe(z.email('must be an email address')).optional(),
    /** ... and this display name. */
    SYSTEM_MAIL_FROM_NAME: envString('Mailroom').pipe(z.string().min(1).max(100)),
    /** Sends allowed per inbox and per organization in any minute (0 = no limit). */
    SEND_RATE_PER_INBOX_PER_MINUTE: envInt(120, { min: 0 }),
    SEND_RATE_PER_ORG_PER_MINUTE: envInt(1200, { min: 0 }),
    /** Outbound messages handed to the provider at once by this instance. */
    OUTBOUND_CONCURRENCY: envInt(16, { min: 1, max: 256 }),
    /** How long a custom domain's signing key and standing are kept; a change of the domain (DOMAINS_FACTS) drops them sooner. */
    DOMAIN_KEY_CACHE_TTL_MS: envInt(60_000, { min: 1, max: 3_600_000 }),
    /** Keys the VERP tokens so a forged report cannot name our messages, and opens custom domains' DKIM keys (the domains service seals them with the same key). Required in production. */
    SECRETS_ENCRYPTION_KEY: secretsKeyField,
  })
  .superRefine((c, ctx) => {
    checkSecretsKey(c, ctx);
    if (c.DKIM_PRIVATE_KEY) {
      const problem = dkimKeyProblem(c.DKIM_PRIVATE_KEY);
      if (problem) ctx.addIssue({ code: 'custom', path: ['DKIM_PRIVATE_KEY'], message: problem });
    }
    // DKIM signs for MAIL_DOMAIN: the system address must be on it for receivers to align the signature with From.
    if (c.SYSTEM_MAIL_FROM && !c.SYSTEM_MAIL_FROM.endsWith(`@${c.MAIL_DOMAIN}`)) ctx.addIssue({ code: 'custom', path: ['SYSTEM_MAIL_FROM'], message: `must be an address on MAIL_DOMAIN (${c.MAIL_DOMAIN})` });
    if (c.MAIL_PROVIDER === 'ses' && !c.SES_REGION) ctx.addIssue({ code: 'custom', path: ['SES_REGION'], message: 'is required with MAIL_PROVIDER=ses' });
    if (Boolean(c.SES_ACCESS_KEY_ID) !== Boolean(c.SES_SECRET_ACCESS_KEY)) ctx.addIssue({ code: 'custom', path: ['SES_ACCESS_KEY_ID'], message: 'SES_ACCESS_KEY_ID and SES_SECRET_ACCESS_KEY go together' });
    for (const arn of c.SES_SNS_TOPIC_ARNS) {
      if (!/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/.test(arn)) ctx.addIssue({ code: 'custom', path: ['SES_SNS_TOPIC_ARNS'], message: `${arn} is not an SNS topic ARN` });
    }
    if (c.MAILROOM_ENV === 'production') {
      if (!c.DKIM_PRIVATE_KEY) ctx.addIssue({ code: 'custom', path: ['DKIM_PRIVATE_KEY'], message: 'is required in production (unsigned mail is junked)' });
      if (c.SNS_TRUSTED_URL_PREFIX && !c.SNS_TRUSTED_URL_PREFIX.startsWith('https://')) ctx.addIssue({ code: 'custom', path: ['SNS_TRUSTED_URL_PREFIX'], message: 'must be an https:// URL in production' });
    }
  })
  .transform((c) => ({ ...c, BOUNCE_DOMAIN: c.BOUNCE_DOMAIN ?? c.MAIL_DOMAIN, SYSTEM_MAIL_FROM: c.SYSTEM_MAIL_FROM ?? `no-reply@${c.MAIL_DOMAIN}`, SECRETS_ENCRYPTION_KEY: c.SECRETS_ENCRYPTION_KEY ?? DEVELOPMENT_ENCRYPTION_KEY }));

export type MailSendConfig = z.output<typeof mailSendConfigSchema>;

export function loadConfig(env: Env): MailSendConfig {
  return parseConfig(mailSendConfigSchema, env);
}
