/**
 * Colleagues in a tenant's organization, for tests of roles. Until invitations (and
 * switch-org) exist, a colleague is made the way they will make one: a user signs up, a
 * membership row with the role is written in the orgs schema, the user's session is pointed
 * at the organization in the auth schema, and a refresh over HTTP then issues a token for it
 * (refresh reads the membership, as it does for every token).
 */
import { randomBytes } from 'node:crypto';
import { createDb, sql, type Kysely } from '@mailroom/db';
import { newId, type Role } from '@mailroom/contracts';
import type { ApiClient, Tenant } from '@mailroom/testing';

export interface Colleague {
  user_id: string;
  email: string;
  role: Role;
  /** An access token acting in the tenant's organization with the role. */
  token: string;
  refreshToken: string;
}

export async function addColleague(
  databaseUrl: string,
  anon: ApiClient,
  org: Pick<Tenant, 'org_id'>,
  signUp: () => Promise<Tenant>,
  role: Role,
): Promise<Colleague> {
  const person = await signUp();
  const me = await anon.get('/api/v1/user/me', { token: person.accessToken });
  const userId: string = me.body.id;
  await addMembership(databaseUrl, userId, org.org_id, role);
  await inDatabase(databaseUrl, (db) => sql`update auth.sessions set org_id = ${org.org_id} where user_id = ${userId}`.execute(db));
  const refreshed = await anon.post('/api/v1/auth/refresh', { refresh_token: person.refreshToken });
  if (refreshed.status !== 200) throw new Error(`refresh of the ${role} answered ${refreshed.status}: ${refreshed.text}`);
  return { user_id: userId, email: person.email, role, token: refreshed.body.access_token, refreshToken: refreshed.body.refresh_token };
}

/**
 * Makes a person a member of another organization with a role, as accepting an invitation
 * does, without the mail: the membership row in the orgs schema. Their sessions stay where
 * they are; switch-org then gives them tokens for it.
 */
export async function addMembership(databaseUrl: string, userId: string, orgId: string, role: Role): Promise<void> {
  await inDatabase(databaseUrl, (db) => sql`insert into orgs.members (id, org_id, user_id, role) values (${newId('member')}, ${orgId}, ${userId}, ${role})`.execute(db));
}

async function inDatabase(databaseUrl: string, work: (db: Kysely<unknown>) => Promise<unknown>): Promise<void> {
  const db: Kysely<unknown> = createDb<unknown>({ url: databaseUrl, schema: 'public', max: 1 });
  try {
    await work(db);
  } finally {
    await db.destroy();
  }
}

/**
 * Gives the organization the domain verified, as the domains service records it once its DNS
 * checks out (domains.int.spec.ts proves that part over DNS); its next check far away. For
 * tests of what a verified domain allows (single sign-on's admitted addresses).
 */
export async function addVerifiedDomain(db: Kysely<unknown>, org: Pick<Tenant, 'org_id' | 'env_id'>, name: string): Promise<void> {
  const now = new Date();
  await sql`insert into domains.domains (id, org_id, env_id, name, status, dkim_selector, dkim_public_key, dkim_private_key_sealed, created_at, verified_at, next_check_at)
    values (${newId('domain')}, ${org.org_id}, ${org.env_id}, ${name}, 'verified', ${`mr${randomBytes(4).toString('hex')}`}, 'k', ${Buffer.from('k')}, ${now}, ${now}, ${new Date(now.getTime() + 86_400_000)})`.execute(db);
}
