/**
 * Members over HTTP: list (paged, with names and emails from auth), get, change a role,
 * remove, leave; every refusal of the rules; another organization's ids.
 */
import type { Role } from '@mailroom/contracts';
import { waitFor } from '@mailroom/testing';
import { addColleague, type Colleague } from './colleagues';
import { usePlatform } from './fixtures';

const { anon, tenant, env, signUp } = usePlatform();

const join = (role: Role): Promise<Colleague> => addColleague(env.DATABASE_URL!, anon, tenant, () => signUp(), role);
const as = (c: { token: string } | string) => anon.withToken(typeof c === 'string' ? c : c.token);

async function memberIdOf(userId: string): Promise<string> {
  const list = await as(tenant.accessToken).get('/api/v1/org/members?limit=100');
  const found = (list.body.data as { id: string; user_id: string }[]).find((m) => m.user_id === userId);
  if (!found) throw new Error(`no member for ${userId}`);
  return found.id;
}

describe('members', () => {
  it('lists the members oldest first with their emails, page by page', async () => {
    const admin = await join('admin');
    const owner = as(tenant.accessToken);
    const all = await owner.get('/api/v1/org/members');
    expect(all.status).toBe(200);
    expect(all.body.data[0]).toMatchObject({ role: 'owner', email: tenant.email, org_id: tenant.org_id, id: expect.stringMatching(/^mem_/) });
    expect(all.body.data).toContainEqual(expect.objectContaining({ user_id: admin.user_id, role: 'admin', email: admin.email, name: null }));
    const first = await owner.get('/api/v1/org/members?limit=1');
    expect(first.body.data).toHaveLength(1);
    expect(first.body.next_page_token).toEqual(expect.any(String));
    const second = await owner.get(`/api/v1/org/members?limit=1&page_token=${first.body.next_page_token}`);
    expect(second.body.data[0].id).not.toBe(first.body.data[0].id);
    for (const bad of ['limit=0', 'limit=101', 'limit=x', 'page_token=nope', 'role=admin']) {
      const res = await owner.get(`/api/v1/org/members?${bad}`);
      expect([res.status, res.body.error.code]).toEqual([400, 'invalid_request']);
    }
    // A viewer reads members; an API key does not (people are managed by people).
    const viewer = await join('viewer');
    expect((await as(viewer).get('/api/v1/org/members')).status).toBe(200);
    expect((await as(tenant.key).get('/api/v1/org/members')).status).toBe(403);
  });

  it("gets a member, and answers another organization's member id with 404", async () => {
    const member = await join('member');
    const id = await memberIdOf(member.user_id);
    const got = await as(tenant.accessToken).get(`/api/v1/org/members/${id}`);
    expect(got.body).toMatchObject({ id, user_id: member.user_id, role: 'member', email: member.email });
    const other = await signUp();
    const theirs = (await as(other.accessToken).get('/api/v1/org/members')).body.data[0].id;
    for (const res of [
      await as(tenant.accessToken).get(`/api/v1/org/members/${theirs}`),
      await as(tenant.accessToken).patch(`/api/v1/org/members/${theirs}`, { role: 'viewer' }),
      await as(tenant.accessToken).delete(`/api/v1/org/members/${theirs}`),
    ]) {
      expect([res.status, res.body.error.code]).toEqual([404, 'not_found']);
    }
    expect((await as(tenant.accessToken).get('/api/v1/org/members/mem_nope')).status).toBe(400);
    expect((await as(other.accessToken).get('/api/v1/org/members')).body.data).toEqual([expect.objectContaining({ role: 'owner' })]);
  });

  it('lets owners and admins change roles, and refuses what the rules refuse', async () => {
    const admin = await join('admin');
    const member = await join('member');
    const memberId = await memberIdOf(member.user_id);
    const adminId = await memberIdOf(admin.user_id);
    const ownerId = await memberIdOf((await as(tenant.accessToken).get('/api/v1/user/me')).body.id);

    const changed = await as(admin).patch(`/api/v1/org/members/${memberId}`, { role: 'viewer' });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ id: memberId, role: 'viewer', email: member.email });
    expect((await as(tenant.accessToken).get(`/api/v1/org/members/${memberId}`)).body.role).toBe('viewer');

    const refusals: [string, Promise<{ status: number; body: any }>, number, RegExp][] = [
      ['an admin granting owner', as(admin).patch(`/api/v1/org/members/${memberId}`, { role: 'owner' }), 403, /admin cannot grant owner/],
      ['the owner making a second owner', as(tenant.accessToken).patch(`/api/v1/org/members/${memberId}`, { role: 'owner' }), 409, /exactly one owner/],
      ['changing your own role', as(admin).patch(`/api/v1/org/members/${adminId}`, { role: 'member' }), 403, /your own role/],
      ["changing the owner's role", as(admin).patch(`/api/v1/org/members/${ownerId}`, { role: 'member' }), 403, /ownership transfer/],
      ['a viewer changing a role', as(member).patch(`/api/v1/org/members/${adminId}`, { role: 'viewer' }), 403, /members.manage/],
      ['an API key', as(tenant.key).patch(`/api/v1/org/members/${memberId}`, { role: 'admin' }), 403, /API key/],
      ['an unknown role', as(tenant.accessToken).patch(`/api/v1/org/members/${memberId}`, { role: 'boss' }), 400, /request body is invalid/],
      ['an unknown field', as(tenant.accessToken).patch(`/api/v1/org/members/${memberId}`, { role: 'admin', title: 'x' }), 400, /request body is invalid/],
      ['no role', as(tenant.accessToken).patch(`/api/v1/org/members/${memberId}`, {}), 400, /request body is invalid/],
    ];
    for (const [what, pending, status, message] of refusals) {
      const res = await pending;
      expect({ what, status: res.status, message: res.body?.error?.message }).toEqual({ what, status, message: expect.stringMatching(message) });
    }
    // The member's token was issued as a member; its role is now viewer, and a viewer changes no role.
    expect((await as(tenant.accessToken).get(`/api/v1/org/members/${memberId}`)).body.role).toBe('viewer');
  });

  it('removes a member but never the owner; the keys they made keep working', async () => {
    const admin = await join('admin');
    const adminId = await memberIdOf(admin.user_id);
    const key = await as(admin).post('/api/v1/keys', { name: 'made by an admin' });
    expect(key.status).toBe(201);
    const ownerId = await memberIdOf((await as(tenant.accessToken).get('/api/v1/user/me')).body.id);
    const ownerRemoval = await as(admin).delete(`/api/v1/org/members/${ownerId}`);
    expect([ownerRemoval.status, ownerRemoval.body.error.message]).toEqual([403, expect.stringMatching(/owner cannot be removed/)]);
    const self = await as(admin).delete(`/api/v1/org/members/${adminId}`);
    expect([self.status, self.body.error.message]).toEqual([400, expect.stringMatching(/members\/leave/)]);

    expect((await as(tenant.accessToken).delete(`/api/v1/org/members/${adminId}`)).status).toBe(204);
    expect((await as(tenant.accessToken).get(`/api/v1/org/members/${adminId}`)).status).toBe(404);
    expect((await as(tenant.accessToken).delete(`/api/v1/org/members/${adminId}`)).status).toBe(404);
    // The organization's key, made by the admin, still works.
    expect((await as(key.body.key).get('/api/v1/inboxes')).status).toBe(200);
  });

  it('decides two admins demoting each other one after the other: one wins, the other is no longer an admin', async () => {
    const a = await join('admin');
    const b = await join('admin');
    const [aId, bId] = [await memberIdOf(a.user_id), await memberIdOf(b.user_id)];
    const [byA, byB] = await Promise.all([
      as(a).patch(`/api/v1/org/members/${bId}`, { role: 'member' }),
      as(b).patch(`/api/v1/org/members/${aId}`, { role: 'member' }),
    ]);
    expect([byA.status, byB.status].sort()).toEqual([200, 403]);
    const loser = byA.status === 403 ? byA : byB;
    expect(loser.body.error.message).toMatch(/your role is member/);
    const roles = await Promise.all([aId, bId].map(async (id) => (await as(tenant.accessToken).get(`/api/v1/org/members/${id}`)).body.role));
    expect(roles.sort()).toEqual(['admin', 'member']);
  });

  it('lets anyone but the owner leave', async () => {
    const viewer = await join('viewer');
    const owner = await as(tenant.accessToken).post('/api/v1/org/members/leave');
    expect([owner.status, owner.body.error.code, owner.body.error.message]).toEqual([409, 'conflict', expect.stringMatching(/transfer ownership/)]);
    expect((await as(tenant.key).post('/api/v1/org/members/leave')).status).toBe(403);
    expect((await as(viewer).post('/api/v1/org/members/leave')).status).toBe(204);
    const left = (await as(tenant.accessToken).get('/api/v1/org/members?limit=100')).body.data as { user_id: string }[];
    expect(left.some((m) => m.user_id === viewer.user_id)).toBe(false);
  });
});

/**
 * Access follows membership: the change is a fact on ORGS_FACTS, and the gateway acts on the
 * tokens it names as soon as the fact arrives (not when they expire, 15 minutes on). The waits
 * are bounded polls on the condition, bounded by the second the product promises.
 */
describe('access after a membership change', () => {
  const bound = { timeoutMs: 1_000, intervalMs: 20 };

  it("refuses a removed member's token, and their refresh", async () => {
    const member = await join('member');
    expect((await as(member).get('/api/v1/inboxes')).status).toBe(200);
    expect((await as(tenant.accessToken).delete(`/api/v1/org/members/${await memberIdOf(member.user_id)}`)).status).toBe(204);
    const refused = await waitFor(async () => {
      const res = await as(member).get('/api/v1/inboxes');
      return res.status === 401 && res;
    }, { ...bound, what: "the removed member's token to be refused" });
    expect(refused.body.error.message).toMatch(/no longer a member/);
    expect((await as(member).get('/api/v1/org')).status).toBe(401);
    expect((await anon.post('/api/v1/auth/refresh', { refresh_token: member.refreshToken })).status).toBe(401);
  });

  it("shrinks a demoted admin's powers, and grows them back on promotion, with the token they hold", async () => {
    const admin = await join('admin');
    const id = await memberIdOf(admin.user_id);
    expect((await as(admin).patch('/api/v1/org', { name: 'Renamed by the admin' })).status).toBe(200);
    expect((await as(tenant.accessToken).patch(`/api/v1/org/members/${id}`, { role: 'viewer' })).status).toBe(200);
    const refused = await waitFor(async () => {
      const res = await as(admin).post('/api/v1/inboxes', {});
      return res.status === 403 && res;
    }, { ...bound, what: "the demoted admin's write to be refused" });
    expect(refused.body.error.message).toMatch(/your role is viewer/);
    expect((await as(admin).patch('/api/v1/org', { name: 'Again' })).status).toBe(403);
    // What a viewer may do, the same token still does.
    expect((await as(admin).get('/api/v1/inboxes')).status).toBe(200);
    expect((await as(tenant.accessToken).patch(`/api/v1/org/members/${id}`, { role: 'member' })).status).toBe(200);
    await waitFor(async () => (await as(admin).post('/api/v1/inboxes', {})).status === 201, { ...bound, what: 'the promoted viewer to create an inbox' });
    expect((await as(admin).patch('/api/v1/org', { name: 'Still no' })).status).toBe(403);
  });

  it("refuses the token of a member who left", async () => {
    const viewer = await join('viewer');
    expect((await as(viewer).post('/api/v1/org/members/leave')).status).toBe(204);
    await waitFor(async () => (await as(viewer).get('/api/v1/inboxes')).status === 401, { ...bound, what: "the leaver's token to be refused" });
  });
});
