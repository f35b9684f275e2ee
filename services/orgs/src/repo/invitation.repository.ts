/** Queries of invitations; every one filters on org_id, except the look-up by token hash (the token names its organization). */
import type { Executor, Kysely, Selectable } from '@mailroom/db';
import type { InvitationTable, OrgsDb } from './tables';

export type InvitationRow = Selectable<InvitationTable>;

export class InvitationRepository {
  constructor(private readonly db: Kysely<OrgsDb>) {}

  /** False when another pending invitation of the address was made meanwhile (one pending per address). */
  async insert(row: InvitationRow, ex: Executor<OrgsDb>): Promise<boolean> {
    const made = await ex.insertInto('invitations').values(row).onConflict((oc) => oc.doNothing()).returning('id').executeTakeFirst();
    return made !== undefined;
  }

  /** Newest first; `before` is the last id of the previous page. */
  list(orgId: string, opts: { limit: number; before?: string | undefined }, ex: Executor<OrgsDb> = this.db): Promise<InvitationRow[]> {
    let q = ex.selectFrom('invitations').selectAll().where('org_id', '=', orgId);
    if (opts.before) q = q.where('id', '<', opts.before);
    return q.orderBy('id', 'desc').limit(opts.limit).execute();
  }

  /** Pending invitations not expired at `now`: each holds a member's place under the plan. */
  async countPending(orgId: string, now: Date, ex: Executor<OrgsDb> = this.db): Promise<number> {
    const row = await ex
      .selectFrom('invitations')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('org_id', '=', orgId)
      .where('status', '=', 'pending')
      .where('expires_at', '>', now)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** The pending invitation of an address (expired or not), locked until the caller's transaction ends. */
  lockPendingFor(orgId: string, email: string, ex: Executor<OrgsDb>): Promise<InvitationRow | undefined> {
    return ex.selectFrom('invitations').selectAll().where('org_id', '=', orgId).where('email', '=', email).where('status', '=', 'pending').forUpdate().executeTakeFirst();
  }

  lock(orgId: string, id: string, ex: Executor<OrgsDb>): Promise<InvitationRow | undefined> {
    return ex.selectFrom('invitations').selectAll().where('org_id', '=', orgId).where('id', '=', id).forUpdate().executeTakeFirst();
  }

  /** By the hash of its token, locked: a token is used once, however many accept it at the same time. */
  lockByTokenHash(tokenHash: string, ex: Executor<OrgsDb>): Promise<InvitationRow | undefined> {
    return ex.selectFrom('invitations').selectAll().where('token_hash', '=', tokenHash).forUpdate().executeTakeFirst();
  }

  async decide(orgId: string, id: string, set: { status: 'accepted' | 'revoked'; at: Date; member_id?: string }, ex: Executor<OrgsDb>): Promise<boolean> {
    const res = await ex
      .updateTable('invitations')
      .set({ status: set.status, decided_at: set.at, member_id: set.member_id ?? null })
      .where('org_id', '=', orgId)
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return res.numUpdatedRows > 0n;
  }
}
