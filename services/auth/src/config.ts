import { z } from 'zod';
import { DEVELOPMENT_ENCRYPTION_KEY, checkSecretsKey, envInt, envString, parseConfig, secretsKeyField, type Env } from '@mailroom/platform';
import { baseEnv } from '@mailroom/runtime';

export const authConfigSchema = z
  .object({
    ...baseEnv,
    /** `iss` and `aud` of access tokens; the gateway checks the same values. */
    AUTH_ISSUER: envString('mailroom'),
    AUTH_AUDIENCE: envString('mailroom-api'),
    ACCESS_TOKEN_TTL_SECONDS: envInt(900, { min: 60, max: 3600 }),
    REFRESH_TOKEN_TTL_SECONDS: envInt(30 * 86_400, { min: 3600 }),
    /** 32 random bytes, base64: seals the token signing keys at rest. Required in production. */
    SECRETS_ENCRYPTION_KEY: secretsKeyField,
  })
  .superRefine((c, ctx) => {
    checkSecretsKey(c, ctx);
  })
  .transform((c) => ({ ...c, SECRETS_ENCRYPTION_KEY: c.SECRETS_ENCRYPTION_KEY ?? DEVELOPMENT_ENCRYPTION_KEY }));

export type AuthConfig = z.output<typeof authConfigSchema>;

export function loadConfig(env: Env): AuthConfig {
  return parseConfig(authConfigSchema, env);
}
