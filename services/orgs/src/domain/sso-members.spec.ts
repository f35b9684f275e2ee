import type { Membership } from '@mailroom/contracts';
import { AppError } from '@mailroom/contracts';
import { ManualClock } from '@mailroom/platform';
import type { MemberRow } from '../repo/member.repository';
import type { OrgsTx } from '../repo/tables';
import type { NewMember } from './invitations';
import { SsoMembers } from './sso-members';

function setup(limit: number) {
  const rows: MemberRow[] = [];
  const facts: string[] = [];
  const tx = {} as OrgsTx;
  const members = new SsoMembers(
    async (work) => work(tx),
    {
      findByUser: async (orgId: string, userId: string) => rows.find((r) => r.org_id === orgId && r.user_id === userId),
      count: async (orgId: string) => rows.filter((r) => r.org_id === orgId).length,
    },
    async (_tx, m: NewMember) => void rows.push({ id: m.id, org_id: m.org_id, user_id: m.user_id, role: m.role, created_at: m.now } as MemberRow),
    async (userId) => rows.filter((r) => r.user_id === userId).map((r): Membership => ({ org_id: r.org_id, org_name: 'Org', role: r.role, default_env_id: 'env_01' as Membership['default_env_id'] })),
    { changed: async (_tx, fact) => void facts.push(`${fact.user_id}:${fact.role}`), kick: () => undefined },
    {
      roomForOneMore: async (_tx: OrgsTx, _org: string, _name: string, held: () => Promise<number>) => {
        if ((await held()) >= limit) throw new AppError('plan_limit', 'members limit reached');
      },
    } as never,
    new ManualClock(new Date('2026-11-29T10:00:00Z')),
  );
  return { members, rows, facts };
}

describe('SsoMembers.join', () => {
  it('makes the person a member with the role, with the membership fact, once', async () => {
    const { members, rows, facts } = setup(10);
    const made = await members.join({ org_id: 'org_a', user_id: 'usr_1', role: 'viewer' });
    expect(made).toMatchObject({ org_id: 'org_a', role: 'viewer' });
    // A member already keeps their role; nothing new is written.
    const again = await members.join({ org_id: 'org_a', user_id: 'usr_1', role: 'admin' });
    expect([again.role, rows.length, facts]).toEqual(['viewer', 1, ['usr_1:viewer']]);
  });

  it("refuses a new member past the plan's limit, but not a member already there", async () => {
    const { members } = setup(1);
    await members.join({ org_id: 'org_a', user_id: 'usr_1', role: 'member' });
    await expect(members.join({ org_id: 'org_a', user_id: 'usr_2', role: 'member' })).rejects.toMatchObject({ code: 'plan_limit' });
    await expect(members.join({ org_id: 'org_a', user_id: 'usr_1', role: 'member' })).resolves.toMatchObject({ org_id: 'org_a' });
  });
});
