import { sql, type Executor, type Kysely, type Selectable } from '@mailroom/db';
import type { AuthDb, SigningKeyTable } from './tables';

export type SigningKeyRow = Selectable<SigningKeyTable>;

export class SigningKeyRepository {
  constructor(private readonly db: Kysely<AuthDb>) {}

  /** Keys that may still verify a token: the active one and those retired after `since`. */
  listVerifying(since: Date, ex: Executor<AuthDb> = this.db): Promise<SigningKeyRow[]> {
    return ex
      .selectFrom('signing_keys')
      .selectAll()
      .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', since)]))
      .orderBy('created_at', 'desc')
      .execute();
  }

  insert(row: { kid: string; alg: string; public_jwk: Record<string, unknown>; private_jwk_sealed: Buffer; now: Date }, ex: Executor<AuthDb> = this.db) {
    return ex
      .insertInto('signing_keys')
      .values({ kid: row.kid, alg: row.alg, public_jwk: JSON.stringify(row.public_jwk), private_jwk_sealed: row.private_jwk_sealed, created_at: row.now })
      .execute();
  }

  retireAllExcept(kid: string, now: Date, ex: Executor<AuthDb> = this.db) {
    return ex.updateTable('signing_keys').set({ retired_at: now }).where('kid', '!=', kid).where('retired_at', 'is', null).execute();
  }

  /** Serializes key creation across instances for the length of the transaction. */
  async lock(ex: Executor<AuthDb>): Promise<void> {
    await sql`select pg_advisory_xact_lock(hashtext('mailroom.auth.signing_keys'))`.execute(ex);
  }
}
