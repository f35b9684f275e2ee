/**
 * Operator commands of the auth service:
 *   node services/auth/dist/cli.js rotate-signing-key
 * makes a new access-token signing key active. Tokens signed with the previous key stay
 * valid until they expire (its public key stays in the JWKS a token lifetime + 5 minutes);
 * running instances pick the new key up within 30 s, gateways on the first token with the
 * new kid.
 *   node services/auth/dist/cli.js purge-deleted [--now <ISO time>]
 * purges the accounts deleted 30 days or more before that time (default: now), as the
 * periodic job does (domain/account-purge.ts); it connects to the bus as auth, since orgs
 * removes their memberships and organizations. Exits 1 when an account could not be purged.
 */
import { createDb, transactor } from '@mailroom/db';
import { RpcClient, connectBus } from '@mailroom/messaging';
import { createLogger, SecretBox, systemClock, type Logger } from '@mailroom/platform';
import { busOptions } from '@mailroom/runtime';
import { orgsDepartureClient } from './clients/orgs-departure.client';
import { revocationsClient } from './clients/revocations.client';
import { loadConfig } from './config';
import { AccessTokens } from './domain/access-tokens';
import { AccountPurge, type PurgeResult } from './domain/account-purge';
import { ApiKeyRepository } from './repo/api-key.repository';
import { DeletedAccountRepository } from './repo/deleted-account.repository';
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

/** Purges the accounts whose recovery window has passed at `now`. */
export async function purgeDeleted(env: Record<string, string | undefined>, now: Date, log: Logger = createLogger({ service: 'auth-cli', level: 'silent' })): Promise<PurgeResult> {
  const config = loadConfig(env);
  const db = createDb<AuthDb>({ url: config.DATABASE_URL, schema: 'auth', max: 1 });
  try {
    const bus = await connectBus(await busOptions('auth', config, log));
    try {
      const onError = (err: unknown, userId: string) => log.error({ err, user_id: userId }, 'could not purge a deleted account');
      const purge = new AccountPurge(transactor(db), new DeletedAccountRepository(db), new ApiKeyRepository(db), orgsDepartureClient(new RpcClient(bus)), revocationsClient(bus, log), systemClock, onError);
      return await purge.purge(now);
    } finally {
      await bus.drain();
    }
  } finally {
    await db.destroy();
  }
}

/** `--now <ISO time>`, or the present when absent; undefined when given but not a time. */
export function nowArgument(args: readonly string[], present: Date): Date | undefined {
  const at = args.indexOf('--now');
  if (at < 0) return args.length === 0 ? present : undefined;
  const value = args[at + 1];
  if (args.length !== 2 || value === undefined || !/^\d{4}-\d{2}-\d{2}T/.test(value)) return undefined;
  const time = new Date(value);
  return Number.isNaN(time.getTime()) ? undefined : time;
}

const USAGE = 'usage: node services/auth/dist/cli.js rotate-signing-key | purge-deleted [--now <ISO time>]';

if (require.main === module) {
  const log = createLogger({ service: 'auth-cli' });
  const [command, ...args] = process.argv.slice(2);
  const fail = (what: string) => (err: unknown) => {
    log.fatal({ err }, what);
    process.exit(1);
  };
  if (command === 'rotate-signing-key') {
    rotateSigningKey(process.env).then((kid) => log.info({ kid }, 'new signing key active'), fail('rotation failed'));
  } else if (command === 'purge-deleted' && nowArgument(args, new Date())) {
    const now = nowArgument(args, new Date())!;
    purgeDeleted(process.env, now, log).then((result) => {
      log.info({ ...result, now: now.toISOString() }, 'deleted accounts purged');
      if (result.failed > 0) process.exit(1);
    }, fail('purge failed'));
  } else {
    log.fatal({ command }, USAGE);
    process.exit(2);
  }
}
