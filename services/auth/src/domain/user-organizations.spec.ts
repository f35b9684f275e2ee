import type { Membership } from '@mailroom/contracts';
import { UserOrganizations } from './user-organizations';

const membership = (org_id: string, role: Membership['role']): Membership => ({ org_id, org_name: `name of ${org_id}`, role, default_env_id: `env_${org_id.slice(4)}` });

describe('UserOrganizations', () => {
  const asked: string[] = [];
  const organizations = new UserOrganizations({
    memberships: async (userId) => {
      asked.push(userId);
      // As orgs answers: in the order the person joined.
      return [membership('org_03', 'viewer'), membership('org_01', 'owner'), membership('org_02', 'admin')];
    },
  });

  it('lists every organization oldest first, with the role, name and default environment, the token\'s one active', async () => {
    const page = await organizations.list({ user_id: 'usr_1', org_id: 'org_02' }, { limit: 20 });
    expect(asked).toEqual(['usr_1']);
    expect(page).toEqual({
      data: [
        { org_id: 'org_01', org_name: 'name of org_01', role: 'owner', default_env_id: 'env_01', active: false },
        { org_id: 'org_02', org_name: 'name of org_02', role: 'admin', default_env_id: 'env_02', active: true },
        { org_id: 'org_03', org_name: 'name of org_03', role: 'viewer', default_env_id: 'env_03', active: false },
      ],
      next_page_token: null,
    });
  });

  it('pages, and refuses a page token it did not make', async () => {
    const caller = { user_id: 'usr_1', org_id: 'org_01' };
    const first = await organizations.list(caller, { limit: 2 });
    expect(first.data.map((o) => o.org_id)).toEqual(['org_01', 'org_02']);
    const second = await organizations.list(caller, { limit: 2, page_token: first.next_page_token! });
    expect([second.data.map((o) => o.org_id), second.next_page_token]).toEqual([['org_03'], null]);
    await expect(organizations.list(caller, { limit: 2, page_token: 'bm9wZQ' })).rejects.toMatchObject({ code: 'invalid_request' });
  });
});
