/**
 * Environments and their members over HTTP: create, list, get, rename, delete (and its 409s);
 * a staging environment with its own key and inbox, which the production key cannot see; a
 * member sees only their environments; a removed environment member is refused in it within
 * a second; another organization's ids answer 404.
 */
import type { Role } from '@mailroom/contracts';
import { waitFor } from '@mailroom/testing';
import { addColleague, type Colleague } from './colleagues';
import { usePlatform } from './fixtures';

const { anon, tenant, env, signUp } = usePlatform();

const join = (role: Role): Promise<Colleague> => addColleague(env.DATABASE_URL!, anon, tenant, () => signUp(), role);
const as = (c: { token: string } | string) => anon.withToken(typeof c === 'string' ? c : c.token);
const inEnv = (envId: string) => ({ headers: { 'x-env-id': envId } });
let counter = 0;
const uniqueName = (base: string) => `${base}-${++counter}-${Date.now().toString(36)}`;

async function memberIdOf(userId: string): Promise<string> {
  const list = await as(tenant.accessToken).get('/api/v1/org/members?limit=100');
  const found = (list.body.data as { id: string; user_id: string }[]).find((m) => m.user_id === userId);
  if (!found) throw new Error(`no member for ${userId}`);
  return found.id;
}

async function createEnvironment(name = uniqueName('staging')): Promise<{ id: string; name: string }> {
  const res = await as(tenant.accessToken).post('/api/v1/environments', { name });
  if (res.status !== 201) throw new Error(`creating ${name} answered ${res.status}: ${res.text}`);
  return res.body;
}

describe('environments', () => {
  it('creates, lists, gets and renames environments; names are unique and checked', async () => {
    const owner = as(tenant.accessToken);
    const name = uniqueName('staging');
    const created = await owner.post('/api/v1/environments', { name });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id: expect.stringMatching(/^env_/), org_id: tenant.org_id, name, is_default: false });
    const again = await owner.post('/api/v1/environments', { name });
    expect([again.status, again.body.error.code]).toEqual([409, 'conflict']);
    for (const bad of [{}, { name: '' }, { name: 'x'.repeat(65) }, { name: '-dash first' }, { name: 'a/b' }, { name: 'ok', extra: 1 }, { name: 7 }]) {
      const res = await owner.post('/api/v1/environments', bad);
      expect([res.status, res.body.error.code]).toEqual([400, 'invalid_request']);
    }
    const all = await owner.get('/api/v1/environments?limit=100');
    expect(all.status).toBe(200);
    expect(all.body.data[0]).toMatchObject({ id: tenant.env_id, name: 'production', is_default: true });
    expect(all.body.data).toContainEqual(created.body);
    const first = await owner.get('/api/v1/environments?limit=1');
    expect(first.body.data).toEqual([all.body.data[0]]);
    const second = await owner.get(`/api/v1/environments?limit=1&page_token=${first.body.next_page_token}`);
    expect(second.body.data[0].id).toBe(all.body.data[1].id);
    for (const bad of ['limit=0', 'limit=101', 'page_token=nope']) expect((await owner.get(`/api/v1/environments?${bad}`)).status).toBe(400);
    expect((await owner.get(`/api/v1/environments/${created.body.id}`)).body).toEqual(created.body);
    const renamed = await owner.patch(`/api/v1/environments/${created.body.id}`, { name: `${name}-renamed` });
    expect([renamed.status, renamed.body.name]).toEqual([200, `${name}-renamed`]);
    const clash = await owner.patch(`/api/v1/environments/${created.body.id}`, { name: 'production' });
    expect([clash.status, clash.body.error.code]).toEqual([409, 'conflict']);
    expect((await owner.patch(`/api/v1/environments/${created.body.id}`, { name: '' })).status).toBe(400);
    expect((await owner.get('/api/v1/environments/env_nope')).status).toBe(400);
    // Environments are managed by people: an API key holds no environments.* permission.
    expect((await as(tenant.key).get('/api/v1/environments')).status).toBe(403);
  });

  it("answers another organization's environment ids with 404", async () => {
    const other = await signUp();
    const theirs = (await as(other.accessToken).get('/api/v1/environments')).body.data[0].id as string;
    const owner = as(tenant.accessToken);
    const memberId = await memberIdOf((await owner.get('/api/v1/user/me')).body.id);
    for (const res of [
      await owner.get(`/api/v1/environments/${theirs}`),
      await owner.patch(`/api/v1/environments/${theirs}`, { name: 'mine now' }),
      await owner.delete(`/api/v1/environments/${theirs}`),
      await owner.get(`/api/v1/environments/${theirs}/members`),
      await owner.post(`/api/v1/environments/${theirs}/members`, { member_id: memberId }),
      await owner.delete(`/api/v1/environments/${theirs}/members/${memberId}`),
      await owner.get('/api/v1/inboxes', inEnv(theirs)),
    ]) {
      expect([res.status, res.body.error.code]).toEqual([404, 'not_found']);
    }
  });

  it("keeps a staging environment's key and inbox apart from production's", async () => {
    const owner = as(tenant.accessToken);
    const staging = await createEnvironment();
    const key = await owner.post('/api/v1/keys', { name: 'staging agent' }, inEnv(staging.id));
    expect([key.status, key.body.env_id]).toEqual([201, staging.id]);
    const stagingKey = as(key.body.key);
    const inbox = await stagingKey.post('/api/v1/inboxes', {});
    expect(inbox.status).toBe(201);
    // The production key does not see it, and cannot reach into staging.
    expect((await as(tenant.key).get(`/api/v1/inboxes/${inbox.body.inbox_id}`)).status).toBe(404);
    expect((await as(tenant.key).get('/api/v1/inboxes?limit=100')).body.data.map((i: { inbox_id: string }) => i.inbox_id)).not.toContain(inbox.body.inbox_id);
    const crossing = await as(tenant.key).get('/api/v1/inboxes', inEnv(staging.id));
    expect([crossing.status, crossing.body.error.code]).toEqual([403, 'forbidden']);
    // The owner's token acts in staging when it names it.
    expect((await owner.get(`/api/v1/inboxes/${inbox.body.inbox_id}`, inEnv(staging.id))).status).toBe(200);
    expect((await owner.get(`/api/v1/inboxes/${inbox.body.inbox_id}`)).status).toBe(404);

    // Deleting: never the default environment; not while anything is left in it.
    const production = await owner.delete(`/api/v1/environments/${tenant.env_id}`);
    expect([production.status, production.body.error.message]).toEqual([409, expect.stringMatching(/default environment/)]);
    const full = await owner.delete(`/api/v1/environments/${staging.id}`);
    expect([full.status, full.body.error.message]).toEqual([409, expect.stringMatching(/1 inbox\(es\), 1 API key\(s\)/)]);
    expect((await stagingKey.delete(`/api/v1/inboxes/${inbox.body.inbox_id}`)).status).toBe(204);
    const keyOnly = await owner.delete(`/api/v1/environments/${staging.id}`);
    expect([keyOnly.status, keyOnly.body.error.message]).toEqual([409, expect.not.stringMatching(/inbox/)]);
    expect((await owner.delete(`/api/v1/keys/${key.body.id}`)).status).toBe(204);
    expect((await owner.delete(`/api/v1/environments/${staging.id}`)).status).toBe(204);
    expect((await owner.get(`/api/v1/environments/${staging.id}`)).status).toBe(404);
    await waitFor(async () => (await owner.get('/api/v1/inboxes', inEnv(staging.id))).status === 404, { timeoutMs: 1_000, intervalMs: 20, what: 'the deleted environment to be refused' });
  });

  it('shows members and viewers only their environments, and lets owners and admins give them one', async () => {
    const owner = as(tenant.accessToken);
    const staging = await createEnvironment();
    const member = await join('member');
    const viewer = await join('viewer');
    const admin = await join('admin');
    const memberId = await memberIdOf(member.user_id);

    // Before: the default environment only.
    expect((await as(member).get('/api/v1/environments')).body.data.map((e: { id: string }) => e.id)).toEqual([tenant.env_id]);
    for (const res of [await as(member).get(`/api/v1/environments/${staging.id}`), await as(member).get(`/api/v1/environments/${staging.id}/members`), await as(member).get('/api/v1/inboxes', inEnv(staging.id))]) {
      expect([res.status, res.body.error.code]).toEqual([404, 'not_found']);
    }
    // An admin sees and acts in every environment.
    expect((await as(admin).get(`/api/v1/environments/${staging.id}`)).status).toBe(200);
    expect((await as(admin).get('/api/v1/inboxes', inEnv(staging.id))).status).toBe(200);

    // Giving: owners and admins only; members of the organization only; once.
    expect((await as(viewer).post(`/api/v1/environments/${staging.id}/members`, { member_id: memberId })).status).toBe(403);
    expect((await as(member).post(`/api/v1/environments/${staging.id}/members`, { member_id: memberId })).status).toBe(403);
    const given = await as(admin).post(`/api/v1/environments/${staging.id}/members`, { member_id: memberId });
    expect(given.status).toBe(201);
    expect(given.body).toMatchObject({ env_id: staging.id, member_id: memberId, user_id: member.user_id, role: 'member', email: member.email });
    const twice = await owner.post(`/api/v1/environments/${staging.id}/members`, { member_id: memberId });
    expect([twice.status, twice.body.error.code]).toEqual([409, 'conflict']);
    const outsider = await signUp();
    const outsiderMember = (await as(outsider.accessToken).get('/api/v1/org/members')).body.data[0].id as string;
    const stranger = await owner.post(`/api/v1/environments/${staging.id}/members`, { member_id: outsiderMember });
    expect([stranger.status, stranger.body.error.code]).toEqual([404, 'not_found']);
    const intoDefault = await owner.post(`/api/v1/environments/${tenant.env_id}/members`, { member_id: memberId });
    expect([intoDefault.status, intoDefault.body.error.code]).toEqual([409, 'conflict']);
    for (const bad of [{}, { member_id: 'mem_nope' }, { member_id: memberId, role: 'admin' }]) {
      expect((await owner.post(`/api/v1/environments/${staging.id}/members`, bad)).status).toBe(400);
    }

    // After: the member sees staging and acts in it; the viewer still does not.
    expect((await as(member).get('/api/v1/environments')).body.data.map((e: { id: string }) => e.id)).toEqual([tenant.env_id, staging.id]);
    expect((await as(member).get('/api/v1/inboxes', inEnv(staging.id))).status).toBe(200);
    expect((await as(viewer).get('/api/v1/inboxes', inEnv(staging.id))).status).toBe(404);
    const members = await as(member).get(`/api/v1/environments/${staging.id}/members`);
    expect(members.body).toEqual({ data: [expect.objectContaining({ member_id: memberId, email: member.email })], next_page_token: null });
    // The default environment's members are the organization's.
    const everyone = await owner.get(`/api/v1/environments/${tenant.env_id}/members?limit=100`);
    expect(everyone.body.data.map((m: { user_id: string }) => m.user_id)).toEqual(expect.arrayContaining([member.user_id, viewer.user_id, admin.user_id]));
    expect(everyone.body.data[0]).toMatchObject({ env_id: tenant.env_id, role: 'owner', email: tenant.email });
  });

  it('refuses a member in an environment taken from them within a second', async () => {
    const owner = as(tenant.accessToken);
    const staging = await createEnvironment();
    const member = await join('member');
    const memberId = await memberIdOf(member.user_id);
    expect((await owner.post(`/api/v1/environments/${staging.id}/members`, { member_id: memberId })).status).toBe(201);
    expect((await as(member).get('/api/v1/inboxes', inEnv(staging.id))).status).toBe(200);
    expect((await owner.delete(`/api/v1/environments/${staging.id}/members/${memberId}`)).status).toBe(204);
    const refused = await waitFor(async () => {
      const res = await as(member).get('/api/v1/inboxes', inEnv(staging.id));
      return res.status === 404 && res;
    }, { timeoutMs: 1_000, intervalMs: 20, what: 'the member to be refused in the environment taken from them' });
    expect(refused.body.error.code).toBe('not_found');
    // Still a member of the organization: the default environment answers.
    expect((await as(member).get('/api/v1/inboxes')).status).toBe(200);
    const gone = await owner.delete(`/api/v1/environments/${staging.id}/members/${memberId}`);
    expect([gone.status, gone.body.error.code]).toEqual([404, 'not_found']);
    const fromDefault = await owner.delete(`/api/v1/environments/${tenant.env_id}/members/${memberId}`);
    expect([fromDefault.status, fromDefault.body.error.code]).toEqual([409, 'conflict']);
  });
});
