/**
 * The Transact port for unit tests of domain code whose repositories are in-memory stand-ins:
 * it opens real transaction objects on a database that is never reached (kysely's
 * DummyDriver), which the stand-ins ignore. Rolling back is the database's job, tested by the
 * integration specs.
 */
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, type Transaction } from 'kysely';
import type { AuditEntry } from '@mailroom/contracts';
import type { Transact } from '@mailroom/platform';

export function memoryTransact<DB>(): Transact<Transaction<DB>> {
  const db = new Kysely<DB>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (k) => new PostgresIntrospector(k),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
  return (work) => db.transaction().execute(work);
}

/** The record of deleted environments (libs/runtime DeletedEnvironments) for the same unit tests. */
export class MemoryDeletedEnvironments {
  private readonly envs = new Set<string>();
  has(orgId: string, envId: string): boolean {
    return this.envs.has(`${orgId}/${envId}`);
  }
  async record(_tx: unknown, env: { org_id: string; env_id: string }): Promise<boolean> {
    if (this.has(env.org_id, env.env_id)) return false;
    this.envs.add(`${env.org_id}/${env.env_id}`);
    return true;
  }
}

/** A service's audit trail (its outbox's audit subject) for the same unit tests: the entries written, in order. */
export class MemoryAuditTrail {
  readonly entries: AuditEntry[] = [];
  kicks = 0;
  async record(_tx: unknown, entry: AuditEntry): Promise<void> {
    this.entries.push(entry);
  }
  kick(): void {
    this.kicks++;
  }
}
