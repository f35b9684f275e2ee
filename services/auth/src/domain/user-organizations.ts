/**
 * The organizations a signed-in person belongs to, as orgs knows them now (role, name,
 * default environment), the one their token acts in marked active. Paged like every list,
 * oldest organization first (ids sort by creation), over the memberships orgs answers whole.
 */
import { z } from 'zod';
import { encodePageToken, pageCursor, type UserOrganization } from '@mailroom/contracts';
import type { OrgsPort } from './ports';

const cursor = z.object({ after: z.string() });

export class UserOrganizations {
  constructor(private readonly orgs: Pick<OrgsPort, 'memberships'>) {}

  async list(
    caller: { user_id: string; org_id: string },
    q: { limit: number; page_token?: string | undefined },
  ): Promise<{ data: UserOrganization[]; next_page_token: string | null }> {
    const after = pageCursor(q.page_token, cursor)?.after;
    const memberships = (await this.orgs.memberships(caller.user_id))
      .filter((m) => after === undefined || m.org_id > after)
      .sort((a, b) => (a.org_id < b.org_id ? -1 : a.org_id > b.org_id ? 1 : 0));
    const page = memberships.slice(0, q.limit);
    const last = page.at(-1);
    return {
      data: page.map((m) => ({ org_id: m.org_id, org_name: m.org_name, role: m.role, default_env_id: m.default_env_id, active: m.org_id === caller.org_id })),
      next_page_token: memberships.length > q.limit && last ? encodePageToken({ after: last.org_id }) : null,
    };
  }
}
