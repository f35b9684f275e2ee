/**
 * Operator commands of the auth service:
 *   node services/auth/dist/cli.js rotate-signing-key
 * makes a new access-token signing key active. Tokens signed with the previous key stay
 * valid until they expire (its public key stays in the JWKS a token lifetime + 5 minutes);
 * running instances pick the new key up within 30 s, gateways on the first token with the
 * new kid.
 */
import { createDb, transactor } from '@mailroom/db';
import { createLogger, SecretBox, systemClock } from '@mailroom/platform';
import { loadConfig } from './config';
import { AccessTokens } from './domain/access-tokens';
import { SigningKeyRepository } from './repo/signing-key.repository';
import type { AuthDb } from './repo/tables';

export async function rotateSigningKey(env: Record<string, string | undefined>): Promise<string> {
  const config = loadConfig(env);
  const db = createDb<AuthDb>({ url: config.DATABASE_URL, schema: 'auth', max: 1 });
  try {
    const tokens = new AccessTokens(transactor(db), new SigningKeyRepository(db), new SecretBox(config.SECRETS_ENCRYPTION_KEY), systemClock, {
      issuer: config.AUTH_ISSUER,
      audience: config.AUTH_AUDIENCE,
      ttlSeconds: config.ACCESS_TOKEN_TTL_SECONDS,
    });
    return await tokens.rotate();
  } finally {
    await db.destroy();
  }
}

if (require.main === module) {
  const log = createLogger({ service: 'auth-cli' });
  const command = process.argv[2];
  if (command !== 'rotate-signing-key') {
    log.fatal({ command }, 'usage: node services/auth/dist/cli.js rotate-signing-key');
    process.exit(2);
  }
  rotateSigningKey(process.env).then(
    (kid) => log.info({ kid }, 'new signing key active'),
    (err: unknown) => {
      log.fatal({ err }, 'rotation failed');
      process.exit(1);
    },
  );
}
