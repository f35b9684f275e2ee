import { createPrivateKey, X509Certificate } from 'node:crypto';
import { z } from 'zod';
import { DEVELOPMENT_ENCRYPTION_KEY, checkSecretsKey, envInt, envString, envUrl, parseCidr, parseConfig, secretsKeyField, type Env } from '@mailroom/platform';
import { baseEnv } from '@mailroom/runtime';
import { oauthProvidersSchema } from './oauth-config';
import type { AttemptPolicy } from './domain/attempt-limits';

export const authConfigSchema = z
  .object({
    ...baseEnv,
    /** `iss` and `aud` of access tokens; the gateway checks the same values. */
    AUTH_ISSUER: envString('mailroom'),
    AUTH_AUDIENCE: envString('mailroom-api'),
    ACCESS_TOKEN_TTL_SECONDS: envInt(900, { min: 60, max: 3600 }),
    REFRESH_TOKEN_TTL_SECONDS: envInt(30 * 86_400, { min: 3600 }),
    /** The web app: verification and reset mails link to its /verify-email and /reset-password pages (the token in the fragment). */
    APP_URL: envUrl('http://localhost:8080').pipe(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' })),
    /** 32 random bytes, base64: seals the token signing keys at rest (and keys the mailed codes' hashes). Required in production. */
    SECRETS_ENCRYPTION_KEY: secretsKeyField,
    /** The one deadline of a sign-in's calls to an outside provider (code, keys, profile); below the gateway's RPC_TIMEOUT_MS. */
    OAUTH_TIMEOUT_MS: envInt(4000, { min: 500, max: 9000 }),
    /** How often deleted accounts past their 30-day window are purged; 0: never (run `cli.js purge-deleted` instead). */
    ACCOUNT_PURGE_INTERVAL_SECONDS: envInt(3600, { min: 0, max: 7 * 86_400 }),
    /** The issuer an authenticator app shows beside the account (the otpauth:// URI of an MFA enrolment). */
    MFA_TOTP_ISSUER: envString('Mailroom').pipe(z.string().max(100).regex(/^[^:]+$/, 'must not contain a colon (it separates issuer and account in an otpauth:// label)')),
    /** The brute-force guard (domain/attempt-limits.ts): failed attempts per email and kind that lock it; the first lock, doubled at each next one up to the max; how long failures are remembered. */
    AUTH_LOCKOUT_FAILURES: envInt(10, { min: 3, max: 100 }),
    AUTH_LOCKOUT_SECONDS: envInt(900, { min: 1, max: 86_400 }),
    AUTH_LOCKOUT_MAX_SECONDS: envInt(86_400, { min: 1, max: 30 * 86_400 }),
    AUTH_LOCKOUT_MEMORY_SECONDS: envInt(86_400, { min: 60, max: 30 * 86_400 }),
    // Single sign-on (issue 26).
    /** Where identity providers send people back: the web app's SSO page, which posts code and state to POST /api/v1/auth/sso/oidc/callback. Empty: <APP_URL>/sso/callback. */
    SSO_REDIRECT_URI: envString('').pipe(z.union([z.literal(''), z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' })])),
    /** Address ranges (comma-separated CIDRs) identity providers may be at although not public: development and tests only (the SSRF guard refuses them otherwise). */
    SSO_ALLOWED_CIDRS: envString(''),
    /** The API's public URL: the SAML SP's entity ids (<url>/api/v1/auth/sso/saml/metadata/<org_id>) and ACS (<url>/api/v1/auth/sso/saml/callback). */
    SSO_SAML_BASE_URL: envString('').pipe(z.union([z.literal(''), z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' })])),
    /** The SP's key pair (PEM, both or neither): IdPs encrypt assertions to the certificate (in the SP metadata); configurations may then require encryption. */
    SSO_SAML_SP_PRIVATE_KEY: envString(''),
    SSO_SAML_SP_CERTIFICATE: envString(''),
    /** The clock skew allowed on SAML assertions' NotBefore/NotOnOrAfter. */
    SSO_SAML_CLOCK_SKEW_SECONDS: envInt(60, { min: 0, max: 300 }),
    /** How old an IdP's metadata (given by URL) may be before a login fetches it again. */
    SSO_SAML_METADATA_REFRESH_SECONDS: envInt(86_400, { min: 60, max: 30 * 86_400 }),
  })
  .superRefine((c, ctx) => {
    checkSecretsKey(c, ctx);
    if (c.AUTH_LOCKOUT_MAX_SECONDS < c.AUTH_LOCKOUT_SECONDS) ctx.addIssue({ code: 'custom', path: ['AUTH_LOCKOUT_MAX_SECONDS'], message: 'must be at least AUTH_LOCKOUT_SECONDS (the first lock)' });
    // Links carry tokens: in production they must not travel in clear (nor point at localhost, the default).
    for (const cidr of c.SSO_ALLOWED_CIDRS.split(',').map((s) => s.trim()).filter(Boolean)) {
      if (!parseCidr(cidr)) ctx.addIssue({ code: 'custom', path: ['SSO_ALLOWED_CIDRS'], message: `${cidr} is not an address range (e.g. 127.0.0.1/32)` });
    }
    if (Boolean(c.SSO_SAML_SP_PRIVATE_KEY) !== Boolean(c.SSO_SAML_SP_CERTIFICATE)) ctx.addIssue({ code: 'custom', path: ['SSO_SAML_SP_CERTIFICATE'], message: 'set SSO_SAML_SP_PRIVATE_KEY and SSO_SAML_SP_CERTIFICATE together (or neither)' });
    if (c.SSO_SAML_SP_CERTIFICATE && !samlCertificateOk(c.SSO_SAML_SP_CERTIFICATE)) ctx.addIssue({ code: 'custom', path: ['SSO_SAML_SP_CERTIFICATE'], message: 'must be a PEM X.509 certificate' });
    if (c.SSO_SAML_SP_PRIVATE_KEY && !samlKeyOk(c.SSO_SAML_SP_PRIVATE_KEY)) ctx.addIssue({ code: 'custom', path: ['SSO_SAML_SP_PRIVATE_KEY'], message: 'must be a PEM RSA private key' });
    if (c.MAILROOM_ENV === 'production' && !c.SSO_SAML_BASE_URL.startsWith('https://')) ctx.addIssue({ code: 'custom', path: ['SSO_SAML_BASE_URL'], message: 'must be set to the API\'s public https URL in production (SAML entity ids and the assertion consumer URL derive from it; the IdP posts assertions there)' });
    if (c.MAILROOM_ENV === 'production' && !c.APP_URL.startsWith('https://')) ctx.addIssue({ code: 'custom', path: ['APP_URL'], message: 'must be an https URL in production (verification and reset links carry tokens)' });
  })
  .transform((c) => ({
    ...c,
    SECRETS_ENCRYPTION_KEY: c.SECRETS_ENCRYPTION_KEY ?? DEVELOPMENT_ENCRYPTION_KEY,
    SSO_REDIRECT_URI: c.SSO_REDIRECT_URI || `${c.APP_URL.replace(/\/+$/, '')}/sso/callback`,
    SSO_SAML_BASE_URL: c.SSO_SAML_BASE_URL || 'http://localhost:8080',
    samlSpKeyPair: c.SSO_SAML_SP_PRIVATE_KEY ? { privateKey: c.SSO_SAML_SP_PRIVATE_KEY, certificate: c.SSO_SAML_SP_CERTIFICATE } : undefined,
    ssoAllowedCidrs: c.SSO_ALLOWED_CIDRS.split(',').map((s) => s.trim()).filter(Boolean),
  }));

/** With the outside providers (oauth-config.ts): variables named after each provider. */
const fullSchema = authConfigSchema.and(oauthProvidersSchema);

export type AuthConfig = z.output<typeof fullSchema>;

export function loadConfig(env: Env): AuthConfig {
  // A plain copy: zod's record takes plain objects only, and process.env is not one.
  return parseConfig(fullSchema, { ...env });
}

/** The brute-force guard's rule from the configuration. */
export function attemptPolicy(c: AuthConfig): AttemptPolicy {
  return { failures: c.AUTH_LOCKOUT_FAILURES, lockMs: c.AUTH_LOCKOUT_SECONDS * 1000, maxLockMs: c.AUTH_LOCKOUT_MAX_SECONDS * 1000, memoryMs: c.AUTH_LOCKOUT_MEMORY_SECONDS * 1000 };
}

function samlCertificateOk(pem: string): boolean {
  try {
    new X509Certificate(pem);
    return true;
  } catch {
    return false;
  }
}

function samlKeyOk(pem: string): boolean {
  try {
    return createPrivateKey(pem).asymmetricKeyType === 'rsa';
  } catch {
    return false;
  }
}
