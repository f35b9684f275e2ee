import { z } from 'zod';
import { DEVELOPMENT_ENCRYPTION_KEY, checkSecretsKey, envBool, envInt, envString, parseCidr, parseConfig, secretsKeyField, type Env } from '@mailroom/platform';
import { RPC_ANSWER_WINDOW_MS } from '@mailroom/messaging';
import { baseEnv } from '@mailroom/runtime';
import { SEND_MAX_MESSAGE_BYTES_DEFAULT } from '@mailroom/contracts';
import { DOWNLOAD_LINK_TTL_SECONDS_DEFAULT } from './domain/download-links';

export const gatewayConfigSchema = z
  .object({
    ...baseEnv,
    /** Seals the answers kept for Idempotency-Key replays: some carry secrets (API keys, webhook secrets). */
    SECRETS_ENCRYPTION_KEY: secretsKeyField,
    HTTP_PORT: envInt(8080, { min: 0, max: 65535 }),
    HTTP_HOST: envString('0.0.0.0'),
    /** Largest JSON body accepted; larger -> 413. */
    BODY_LIMIT_BYTES: envInt(1_048_576, { min: 1024 }),
    /** Largest upload (POST /api/v1/attachments), and the largest message a send may make (mailbox reads it too). */
    SEND_MAX_MESSAGE_BYTES: envInt(SEND_MAX_MESSAGE_BYTES_DEFAULT, { min: 1024 }),
    /** How long a service may take to answer before the client gets 504; the bus admits an answer within RPC_ANSWER_WINDOW_MS at most. */
    RPC_TIMEOUT_MS: envInt(5_000, { min: 100, max: RPC_ANSWER_WINDOW_MS }),
    /** How long a verified API key is trusted without asking auth again: the bound on revocation delay. */
    API_KEY_CACHE_TTL_MS: envInt(1_000, { min: 0, max: 1_000 }),
    /** Per credential (API key or user): sustained requests per second and burst. 0 = no limit. */
    RATE_LIMIT_PER_SECOND: envInt(100, { min: 0 }),
    RATE_LIMIT_BURST: envInt(200, { min: 1 }),
    /** Per client IP, for requests without a valid credential (signup, login, bad keys). 0 = no limit. */
    RATE_LIMIT_ANONYMOUS_PER_MINUTE: envInt(60, { min: 0 }),
    AUTH_ISSUER: envString('mailroom'),
    AUTH_AUDIENCE: envString('mailroom-api'),
    /** Longest access token lifetime auth may issue: how far back revocations are replayed at start. */
    ACCESS_TOKEN_TTL_SECONDS: envInt(900, { min: 60, max: 3600 }),
    /** Trust X-Forwarded-For from a proxy in front (set when behind a load balancer). */
    TRUST_PROXY: envBool(false),
    /** Attachments given by URL: how long fetching one may take, connection to last byte. */
    ATTACHMENT_URL_TIMEOUT_MS: envInt(30_000, { min: 1_000, max: 300_000 }),
    /** Ranges attachment URLs may reach although not public (development and tests only), comma-separated CIDRs. */
    ATTACHMENT_URL_ALLOWED_CIDRS: envString(''),
    /** How long a signed download link (download_url, raw_download_url) works. */
    DOWNLOAD_LINK_TTL_SECONDS: envInt(DOWNLOAD_LINK_TTL_SECONDS_DEFAULT, { min: 60, max: 7 * 86_400 }),
    /** The API's public URL, the start of signed download links; empty: the origin each request came to (Host, and X-Forwarded-Proto with TRUST_PROXY). */
    PUBLIC_API_URL: envString('').pipe(z.union([z.literal(''), z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' })])),
  })
  .superRefine((c, ctx) => {
    checkSecretsKey(c, ctx);
    for (const cidr of c.ATTACHMENT_URL_ALLOWED_CIDRS.split(',').map((v) => v.trim()).filter(Boolean)) {
      if (!parseCidr(cidr)) ctx.addIssue({ code: 'custom', path: ['ATTACHMENT_URL_ALLOWED_CIDRS'], message: `${cidr} is not an address range (e.g. 127.0.0.1/32)` });
    }
    // Links carry a credential: in production they are handed out over https only.
    if (c.MAILROOM_ENV === 'production' && c.PUBLIC_API_URL && !c.PUBLIC_API_URL.startsWith('https://')) ctx.addIssue({ code: 'custom', path: ['PUBLIC_API_URL'], message: 'must be an https URL in production (signed download links start with it)' });
  })
  .transform((c) => ({ ...c, SECRETS_ENCRYPTION_KEY: c.SECRETS_ENCRYPTION_KEY ?? DEVELOPMENT_ENCRYPTION_KEY, PUBLIC_API_URL: c.PUBLIC_API_URL.replace(/\/+$/, ''), attachmentUrlAllowedCidrs: c.ATTACHMENT_URL_ALLOWED_CIDRS.split(',').map((v) => v.trim()).filter(Boolean) }));

export type GatewayConfig = z.output<typeof gatewayConfigSchema>;

export function loadConfig(env: Env): GatewayConfig {
  return parseConfig(gatewayConfigSchema, env);
}
