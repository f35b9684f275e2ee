/** Single sign-on: organizations' configurations (every query filters on org_id where a tenant asks), login attempts, linked identities. */
import type { Executor, Insertable, Kysely, Selectable, Updateable } from '@mailroom/db';
import type { AuthDb, SsoAttemptTable, SsoConfigurationTable, SsoIdentityTable } from './tables';

export type SsoConfigRow = Selectable<SsoConfigurationTable>;
export type SsoAttemptRow = Selectable<SsoAttemptTable>;
export type SsoIdentityRow = Selectable<SsoIdentityTable>;
export type SsoConfigChanges = Omit<Updateable<SsoConfigurationTable>, 'id' | 'org_id' | 'type' | 'created_at' | 'active'>;

export class SsoRepository {
  constructor(private readonly db: Kysely<AuthDb>) {}

  async insertConfig(row: Insertable<SsoConfigurationTable>, ex: Executor<AuthDb> = this.db): Promise<void> {
    await ex.insertInto('sso_configurations').values(row).execute();
  }

  /** Oldest first. */
  listConfigs(orgId: string, ex: Executor<AuthDb> = this.db): Promise<SsoConfigRow[]> {
    return ex.selectFrom('sso_configurations').selectAll().where('org_id', '=', orgId).orderBy('id').execute();
  }

  async countConfigs(orgId: string, ex: Executor<AuthDb> = this.db): Promise<number> {
    const row = await ex.selectFrom('sso_configurations').select((eb) => eb.fn.countAll<string>().as('n')).where('org_id', '=', orgId).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  findConfig(orgId: string, id: string, ex: Executor<AuthDb> = this.db): Promise<SsoConfigRow | undefined> {
    return ex.selectFrom('sso_configurations').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
  }

  /** The configuration an attempt was started with (attempts name it; no tenant asks). */
  findConfigById(id: string, ex: Executor<AuthDb> = this.db): Promise<SsoConfigRow | undefined> {
    return ex.selectFrom('sso_configurations').selectAll().where('id', '=', id).executeTakeFirst();
  }

  findActiveConfig(orgId: string, ex: Executor<AuthDb> = this.db): Promise<SsoConfigRow | undefined> {
    return ex.selectFrom('sso_configurations').selectAll().where('org_id', '=', orgId).where('active', '=', true).executeTakeFirst();
  }

  updateConfig(orgId: string, id: string, changes: SsoConfigChanges, ex: Executor<AuthDb> = this.db): Promise<SsoConfigRow | undefined> {
    return ex.updateTable('sso_configurations').set(changes).where('org_id', '=', orgId).where('id', '=', id).returningAll().executeTakeFirst();
  }

  /** Locks the organization's configurations until the transaction ends (activations queue up). */
  async lockConfigs(orgId: string, ex: Executor<AuthDb>): Promise<void> {
    await ex.selectFrom('sso_configurations').select('id').where('org_id', '=', orgId).forUpdate().execute();
  }

  async deactivateAll(orgId: string, ex: Executor<AuthDb> = this.db): Promise<void> {
    await ex.updateTable('sso_configurations').set({ active: false }).where('org_id', '=', orgId).where('active', '=', true).execute();
  }

  /** Marks `id` active (after deactivateAll: the partial unique index is checked row by row). */
  activate(orgId: string, id: string, now: Date, ex: Executor<AuthDb> = this.db): Promise<SsoConfigRow | undefined> {
    return ex.updateTable('sso_configurations').set({ active: true, updated_at: now }).where('org_id', '=', orgId).where('id', '=', id).returningAll().executeTakeFirst();
  }

  async deleteConfig(orgId: string, id: string, ex: Executor<AuthDb> = this.db): Promise<boolean> {
    const res = await ex.deleteFrom('sso_configurations').where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
    return res.numDeletedRows > 0n;
  }

  /** The organizations among `orgIds` whose active configuration is enforced. */
  async enforcedAmong(orgIds: readonly string[], ex: Executor<AuthDb> = this.db): Promise<Set<string>> {
    if (orgIds.length === 0) return new Set();
    const rows = await ex.selectFrom('sso_configurations').select('org_id').where('org_id', 'in', [...orgIds]).where('active', '=', true).where('enforced', '=', true).execute();
    return new Set(rows.map((r) => r.org_id));
  }

  async insertAttempt(row: Omit<SsoAttemptRow, 'used_at'>, ex: Executor<AuthDb> = this.db): Promise<void> {
    await ex.insertInto('sso_attempts').values(row).execute();
  }

  /** Marks the attempt of this state used and returns it; undefined when there is none or it was used already. */
  takeAttempt(stateHash: Buffer, now: Date, ex: Executor<AuthDb> = this.db): Promise<SsoAttemptRow | undefined> {
    return ex.updateTable('sso_attempts').set({ used_at: now }).where('state_hash', '=', stateHash).where('used_at', 'is', null).returningAll().executeTakeFirst();
  }

  async deleteAttemptsExpiredBefore(before: Date, ex: Executor<AuthDb> = this.db): Promise<void> {
    await ex.deleteFrom('sso_attempts').where('expires_at', '<', before).execute();
  }

  /** Active SAML configurations whose IdP has this entity id (where an unasked response may belong). */
  findActiveSamlByIssuer(issuer: string, ex: Executor<AuthDb> = this.db): Promise<SsoConfigRow[]> {
    return ex.selectFrom('sso_configurations').selectAll().where('issuer', '=', issuer).where('active', '=', true).where('type', '=', 'saml').execute();
  }

  /** The organization's SAML configuration its SP metadata describes: the active one, else the newest. */
  findSamlForMetadata(orgId: string, ex: Executor<AuthDb> = this.db): Promise<SsoConfigRow | undefined> {
    return ex.selectFrom('sso_configurations').selectAll().where('org_id', '=', orgId).where('type', '=', 'saml').orderBy('active', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst();
  }

  /** Records an assertion as taken; false when it was already (a replay). */
  async markAssertionSeen(row: { issuer: string; assertion_id: string; expires_at: Date }, ex: Executor<AuthDb> = this.db): Promise<boolean> {
    const made = await ex.insertInto('saml_assertions_seen').values(row).onConflict((oc) => oc.doNothing()).returning('assertion_id').executeTakeFirst();
    return made !== undefined;
  }

  async deleteAssertionsExpiredBefore(before: Date, ex: Executor<AuthDb> = this.db): Promise<void> {
    await ex.deleteFrom('saml_assertions_seen').where('expires_at', '<', before).execute();
  }

  /** Unlinks every identity of a configuration (its provider is another one now). */
  async deleteIdentitiesOf(configId: string, ex: Executor<AuthDb> = this.db): Promise<void> {
    await ex.deleteFrom('sso_identities').where('config_id', '=', configId).execute();
  }

  findIdentity(configId: string, subject: string, ex: Executor<AuthDb> = this.db): Promise<SsoIdentityRow | undefined> {
    return ex.selectFrom('sso_identities').selectAll().where('config_id', '=', configId).where('subject', '=', subject).executeTakeFirst();
  }

  /** False when the identity was linked meanwhile. */
  async insertIdentity(row: SsoIdentityRow, ex: Executor<AuthDb> = this.db): Promise<boolean> {
    const made = await ex.insertInto('sso_identities').values(row).onConflict((oc) => oc.doNothing()).returning('subject').executeTakeFirst();
    return made !== undefined;
  }

  async touchIdentity(configId: string, subject: string, use: { email: string; now: Date }, ex: Executor<AuthDb> = this.db): Promise<void> {
    await ex.updateTable('sso_identities').set({ email: use.email, last_used_at: use.now }).where('config_id', '=', configId).where('subject', '=', subject).execute();
  }
}
