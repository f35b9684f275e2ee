import { AppError, type Membership } from '@mailroom/contracts';
import { ManualClock } from '@mailroom/platform';
import type { OrgsPort } from './ports';
import { SessionStart, ssoAllows } from './session-start';
import { domainAllowed, ssoIdentity } from './sso-rules';

const mapping = { email: 'email', name: 'name' };

function refusal(run: () => unknown): AppError {
  try {
    run();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('not refused');
}

describe('ssoIdentity', () => {
  it('reads the address and name under the configured claim names, lower-casing the address', () => {
    const claims = { sub: 's1', mail: 'Ann@Corp.Example', email: 'ann@corp.example', email_verified: true, display: '  Ann  ' };
    expect(ssoIdentity(claims, { email: 'mail', name: 'display' }, ['corp.example'])).toEqual({ subject: 's1', email: 'ann@corp.example', name: 'Ann' });
  });

  it('takes another claim than email only when it is the verified email: email_verified vouches for that one alone', () => {
    const claims = { sub: 's1', upn: 'ceo@corp.example', email: 'intern@corp.example', email_verified: true };
    expect(refusal(() => ssoIdentity(claims, { email: 'upn', name: 'name' }, ['corp.example'])).message).toContain('email_verified vouches for the email claim only');
    expect(refusal(() => ssoIdentity({ sub: 's1', upn: 'ceo@corp.example', email_verified: true }, { email: 'upn', name: 'name' }, ['corp.example'])).code).toBe('forbidden');
  });

  it('takes email_verified as a string too, and no name as null', () => {
    expect(ssoIdentity({ sub: 's', email: 'a@corp.example', email_verified: 'true' }, mapping, ['corp.example']).name).toBeNull();
  });

  it('refuses no subject, no address, an address not said verified, and one outside the allowed domains (403)', () => {
    const ok = { sub: 's', email: 'a@corp.example', email_verified: true };
    expect(refusal(() => ssoIdentity({ ...ok, sub: '' }, mapping, ['corp.example'])).message).toContain('sub');
    expect(refusal(() => ssoIdentity({ ...ok, email: 'not an address' }, mapping, ['corp.example'])).message).toContain('email claim');
    expect(refusal(() => ssoIdentity({ ...ok, email_verified: false }, mapping, ['corp.example'])).message).toContain('verified');
    expect(refusal(() => ssoIdentity({ ...ok, email_verified: undefined }, mapping, ['corp.example'])).code).toBe('forbidden');
    const outside = refusal(() => ssoIdentity(ok, mapping, ['other.example']));
    expect([outside.code, outside.message]).toEqual(['forbidden', expect.stringContaining('other.example')]);
  });
});

describe('domainAllowed', () => {
  it('matches the domain exactly: a sub-domain or a look-alike is another domain', () => {
    expect(domainAllowed('a@corp.example', ['corp.example'])).toBe(true);
    expect(domainAllowed('a@eu.corp.example', ['corp.example'])).toBe(false);
    expect(domainAllowed('a@evilcorp.example', ['corp.example'])).toBe(false);
    expect(domainAllowed('a@CORP.example', ['corp.example'])).toBe(true);
  });
});

describe('ssoAllows (enforcement)', () => {
  const enforced = new Set(['org_a']);
  it('lets SSO sessions and owners in, refuses other sign-ins of members where SSO is enforced', () => {
    expect(ssoAllows({ org_id: 'org_a', role: 'admin' }, 'sso', enforced)).toBe(true);
    expect(ssoAllows({ org_id: 'org_a', role: 'owner' }, 'password', enforced)).toBe(true);
    expect(ssoAllows({ org_id: 'org_a', role: 'member' }, 'password', enforced)).toBe(false);
    expect(ssoAllows({ org_id: 'org_a', role: 'viewer' }, 'provider', enforced)).toBe(false);
    expect(ssoAllows({ org_id: 'org_a', role: 'admin' }, null, enforced)).toBe(false);
    expect(ssoAllows({ org_id: 'org_b', role: 'member' }, 'password', enforced)).toBe(true);
  });
});

describe('SessionStart.acting (the organization a sign-in acts in)', () => {
  const m = (org_id: string, role: Membership['role']): Membership => ({ org_id, org_name: org_id, role, default_env_id: 'env_01' as Membership['default_env_id'] });
  const start = (memberships: Membership[], enforced: string[]) =>
    new SessionStart(
      (() => Promise.reject(new Error('no transaction here'))) as never,
      {} as never,
      {} as never,
      { memberships: async () => memberships } as unknown as OrgsPort,
      new ManualClock(new Date('2026-11-29T10:00:00Z')),
      { refreshTokenTtlSeconds: 3600 },
      {} as never,
      { enforcedAmong: async (ids) => new Set(ids.filter((id) => enforced.includes(id))) },
    );

  it('skips organizations enforcing SSO for a password, not for SSO, and not where the person is the owner', async () => {
    expect((await start([m('org_a', 'member'), m('org_b', 'member')], ['org_a']).acting('usr_1', 'password')).org_id).toBe('org_b');
    expect((await start([m('org_a', 'member'), m('org_b', 'member')], ['org_a']).acting('usr_1', 'sso')).org_id).toBe('org_a');
    expect((await start([m('org_a', 'owner'), m('org_b', 'member')], ['org_a']).acting('usr_1', 'password')).org_id).toBe('org_a');
  });

  it('answers sso_required when every organization refuses the sign-in, forbidden when there is none', async () => {
    await expect(start([m('org_a', 'admin')], ['org_a']).acting('usr_1', 'provider')).rejects.toMatchObject({ code: 'sso_required', message: expect.stringContaining('/api/v1/auth/sso/org_a') });
    await expect(start([], []).acting('usr_1', 'password')).rejects.toMatchObject({ code: 'forbidden' });
  });
});
