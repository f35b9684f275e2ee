/**
 * Operator commands of the admin service:
 *   node services/admin/dist/cli.js create-key --name <name> [--expires-at <ISO time>]
 * makes an admin key and prints it, once, on standard output (the only way to the first key:
 * there is no default one). It migrates the admin schema first, so it works before the
 * service ever started. `bash scripts/mailroom admin create-key --name ...` runs it with the
 * launcher's settings.
 */
import { createDb, migrate, transactor, type Kysely } from '@mailroom/db';
import { adminKeyCreateBody, type AdminKey } from '@mailroom/contracts';
import pino from 'pino';
import { createLogger, systemClock } from '@mailroom/platform';
import { loadConfig } from './config';
import { AdminKeys, COMMAND_CALL } from './domain/admin-keys';
import { AuditLog } from './domain/audit-log';
import { AuditLogRepository } from './repo/audit-log.repository';
import { MIGRATIONS_DIR } from './main';
import { AdminKeyRepository } from './repo/admin-key.repository';
import type { AdminDb } from './repo/tables';

/** `--name x [--expires-at t]` as the creation body; a message saying what is wrong otherwise. */
export function createKeyArguments(args: readonly string[]): { name: string; expires_at?: string } | string {
  const values: Record<string, string> = {};
  for (let i = 0; i < args.length; i += 2) {
    const flag = args[i]!;
    const value = args[i + 1];
    if ((flag !== '--name' && flag !== '--expires-at') || value === undefined || flag.slice(2) in values) return `unexpected argument ${flag}`;
    values[flag.slice(2)] = value;
  }
  const parsed = adminKeyCreateBody.safeParse({ name: values.name, ...(values['expires-at'] === undefined ? {} : { expires_at: values['expires-at'] }) });
  if (!parsed.success) return parsed.error.issues.map((i) => `--${String(i.path[0]).replace('_', '-')}: ${i.message}`).join('; ');
  return parsed.data;
}

export async function createKey(env: Record<string, string | undefined>, input: { name: string; expires_at?: string }): Promise<AdminKey & { key: string }> {
  const config = loadConfig(env);
  const db = createDb<AdminDb>({ url: config.DATABASE_URL, schema: 'admin', max: 1 });
  try {
    await migrate(db as unknown as Kysely<unknown>, { schema: 'admin', migrationsDir: MIGRATIONS_DIR });
    const audit = new AuditLog(new AuditLogRepository(db), systemClock);
    return await new AdminKeys(transactor(db), new AdminKeyRepository(db), audit, systemClock).create(null, input, COMMAND_CALL);
  } finally {
    await db.destroy();
  }
}

const USAGE = 'usage: node services/admin/dist/cli.js create-key --name <name> [--expires-at <ISO time>]';

if (require.main === module) {
  // Standard output carries the key alone; what is said about it goes to standard error.
  const log = createLogger({ service: 'admin-cli', destination: pino.destination(2) });
  const [command, ...args] = process.argv.slice(2);
  const input = command === 'create-key' ? createKeyArguments(args) : USAGE;
  if (typeof input === 'string') {
    log.fatal({ command }, input === USAGE ? USAGE : `${input}\n${USAGE}`);
    process.exit(2);
  }
  createKey(process.env, input).then(
    (key) => {
      log.info({ id: key.id, name: key.name, expires_at: key.expires_at }, 'admin key created; it is shown once, below');
      process.stdout.write(`${key.key}\n`);
    },
    (err: unknown) => {
      log.fatal({ err }, 'could not create the admin key');
      process.exit(1);
    },
  );
}
