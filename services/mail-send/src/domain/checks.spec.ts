import { ManualClock } from '@mailroom/platform';
import type { OrganizationStatus } from '@mailroom/contracts';
import { ORG_STATUS_TTL_MS, OrgStatuses, freedIn } from './checks';

describe('organization status for the pre-send check', () => {
  it('asks orgs at most once per organization within the TTL, and again after it', async () => {
    const clock = new ManualClock(new Date('2026-11-22T10:00:00Z'));
    const answers: Record<string, OrganizationStatus> = { org_a: 'active', org_b: 'paused' };
    const asked: string[] = [];
    const statuses = new OrgStatuses(async (id) => {
      asked.push(id);
      return answers[id]!;
    }, clock);
    expect(await statuses.of('org_a')).toBe('active');
    expect(await statuses.of('org_b')).toBe('paused');
    answers.org_a = 'paused';
    clock.advance(ORG_STATUS_TTL_MS - 1);
    expect(await statuses.of('org_a')).toBe('active');
    clock.advance(1);
    expect(await statuses.of('org_a')).toBe('paused');
    expect(asked).toEqual(['org_a', 'org_b', 'org_a']);
  });

  it('caches nothing when orgs cannot answer', async () => {
    const clock = new ManualClock(new Date('2026-11-22T10:00:00Z'));
    let up = false;
    const statuses = new OrgStatuses(async () => {
      if (!up) throw new Error('orgs unavailable');
      return 'active';
    }, clock);
    await expect(statuses.of('org_a')).rejects.toThrow('orgs unavailable');
    up = true;
    expect(await statuses.of('org_a')).toBe('active');
  });
});

describe('when a refusal for rate ends', () => {
  const now = new Date('2026-11-22T10:00:00Z');
  const ago = (ms: number) => new Date(now.getTime() - ms);
  it('is when the oldest send of the last minute leaves it, in whole seconds from 1 to 60', () => {
    expect(freedIn(ago(59_000), now)).toBe(1);
    expect(freedIn(ago(59_999), now)).toBe(1);
    expect(freedIn(ago(30_500), now)).toBe(30);
    expect(freedIn(ago(0), now)).toBe(60);
    expect(freedIn(null, now)).toBe(60);
  });
});
