/**
 * Environments without a database: who sees which environment, when one may be deleted, and
 * that the default environment's members are the organization's.
 */
import { AppError } from '@mailroom/contracts';
import { deletionRefusal, maySeeEnvironment, membershipChangeRefusal, seesEveryEnvironment } from './environments';

const staging = { name: 'staging', is_default: false };
const production = { name: 'production', is_default: true };
const empty = { inboxes: 0, api_keys: 0, webhook_endpoints: 0 };

describe('who sees an environment', () => {
  it('lets owners and admins see every environment, members and viewers only theirs and the default one', () => {
    expect(seesEveryEnvironment('owner')).toBe(true);
    expect(seesEveryEnvironment('admin')).toBe(true);
    expect(seesEveryEnvironment('member')).toBe(false);
    expect(seesEveryEnvironment('viewer')).toBe(false);
    for (const role of ['owner', 'admin'] as const) expect(maySeeEnvironment(role, staging, false)).toBe(true);
    for (const role of ['member', 'viewer'] as const) {
      expect(maySeeEnvironment(role, staging, false)).toBe(false);
      expect(maySeeEnvironment(role, staging, true)).toBe(true);
      expect(maySeeEnvironment(role, production, false)).toBe(true);
    }
  });
});

describe('deleting an environment', () => {
  it('refuses the default environment with a conflict', () => {
    const refusal = deletionRefusal(production, empty);
    expect(refusal).toBeInstanceOf(AppError);
    expect([refusal?.code, refusal?.message]).toEqual(['conflict', expect.stringMatching(/default environment/)]);
  });

  it('refuses an environment that holds anything, naming what', () => {
    expect(deletionRefusal(staging, { ...empty, inboxes: 2 })?.message).toMatch(/2 inbox\(es\)/);
    expect(deletionRefusal(staging, { ...empty, api_keys: 1 })?.message).toMatch(/1 API key/);
    expect(deletionRefusal(staging, { inboxes: 1, api_keys: 1, webhook_endpoints: 3 })?.message).toMatch(/1 inbox\(es\), 1 API key\(s\), 3 webhook endpoint/);
    expect(deletionRefusal(staging, { ...empty, webhook_endpoints: 1 })?.code).toBe('conflict');
  });

  it('allows an empty environment that is not the default', () => {
    expect(deletionRefusal(staging, empty)).toBeUndefined();
  });
});

describe("an environment's members", () => {
  it('cannot be changed in the default environment, which every member has', () => {
    expect(membershipChangeRefusal(production)?.code).toBe('conflict');
    expect(membershipChangeRefusal(staging)).toBeUndefined();
  });
});
