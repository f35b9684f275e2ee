/** Changing the email address without a database: asking (proof, taken, throttle, the two mails), confirming by code or link, what it ends. */
import { DEVELOPMENT_ENCRYPTION_KEY } from '@mailroom/platform';
import { refusalOf } from '@mailroom/testing';
import { MemoryAccounts } from '../../test/memory-accounts';
import { memoryGuard } from '../../test/memory-attempts';
import { clockAt, MemoryOutbox, memoryTransact } from '../../test/memory-credentials';
import { EmailChange } from './email-change';
import { EmailVerification } from './email-verification';
import { IdentityProof } from './identity-proof';
import { CodeHasher, OneTimeCodes } from './one-time-codes';

function setup() {
  const clock = clockAt();
  const store = new MemoryAccounts();
  const outbox = new MemoryOutbox();
  store.addUser('usr_ada', 'ada@example.com', 'hash:old password');
  store.addUser('usr_bob', 'bob@example.com');
  for (const id of ['ses_here', 'ses_phone']) store.addSession(id, 'usr_ada');
  store.addSession('ses_bob', 'usr_bob');
  const codes = new OneTimeCodes(store, new CodeHasher(DEVELOPMENT_ENCRYPTION_KEY), 'https://app.example.com', clock);
  const passwords = { verify: async (h: string | null | undefined, p: string) => h === `hash:${p}` };
  const proof = new IdentityProof(passwords, { wait: async () => undefined, failed: async () => undefined }, clock);
  const change = new EmailChange(memoryTransact, store, store, store, codes, proof, outbox, clock, { accessTokenTtlSeconds: 900 });
  const verification = new EmailVerification(memoryTransact, store, store, codes, outbox, clock, memoryGuard(clock).guard);
  const me = { user_id: 'usr_ada', session_id: 'ses_here' };
  const ask = (new_email = 'ada@new.example.com') => change.request(me, { new_email, current_password: 'old password' });
  return { clock, store, outbox, change, verification, me, ask };
}

describe('asking to change the address', () => {
  it('mails a code and a link to the new address, and a notice without either to the old one; nothing changes yet', async () => {
    const { ask, outbox, store, clock } = setup();
    await ask();
    const mail = outbox.last('email_change');
    expect(mail.to).toBe('ada@new.example.com');
    expect(mail.data.code).toMatch(/^\d{6}$/);
    expect(mail.data.link).toBe(`https://app.example.com/confirm-email-change#token=${mail.data.token}`);
    expect(mail.data.token).toMatch(/^mre_/);
    const notice = outbox.last('email_change_requested');
    expect(notice).toMatchObject({ to: 'ada@example.com', data: { new_email: 'ada@new.example.com', requested_at: clock.now().toISOString() } });
    expect(JSON.stringify(notice)).not.toContain(mail.data.token);
    expect(store.codes.map((c) => [c.purpose, c.email])).toEqual([['email_change', 'ada@new.example.com']]);
    expect(store.users.get('usr_ada')!.email).toBe('ada@example.com');
  });

  it('refuses a wrong password (403), the current address (400) and one another account has, deleted or not (409)', async () => {
    const { change, me, ask, store, outbox } = setup();
    expect((await refusalOf(change.request(me, { new_email: 'x@example.com', current_password: 'guess' }))).code).toBe('forbidden');
    const same = await refusalOf(ask('ada@example.com'));
    expect([same.code, same.details]).toEqual(['invalid_request', [{ path: 'body.new_email', message: 'is the current address' }]]);
    expect([(await refusalOf(ask('bob@example.com'))).code, (await refusalOf(ask('bob@example.com'))).status]).toEqual(['email_taken', 409]);
    store.users.get('usr_bob')!.deleted_at = new Date('2026-11-20T00:00:00.000Z');
    expect((await refusalOf(ask('bob@example.com'))).code).toBe('email_taken');
    expect(outbox.mails).toEqual([]);
  });

  it('sends at most one mail a minute; a newer one replaces the open one', async () => {
    const { ask, outbox, clock, change, me } = setup();
    await ask();
    const first = outbox.last('email_change');
    const soon = await refusalOf(ask('other@example.com'));
    expect([soon.code, soon.retryAfterSeconds]).toEqual(['rate_limited', 60]);
    clock.advance(60_000);
    await ask('other@example.com');
    expect((await refusalOf(change.confirm(me, { token: first.data.token }))).code).toBe('invalid_code');
    expect((await change.confirm(me, { code: outbox.last('email_change').data.code })).email).toBe('other@example.com');
  });
});

describe('confirming the change', () => {
  it('with the code: the address changes and counts as verified, every other session ends, codes mailed to the old address stop working', async () => {
    const { ask, change, me, outbox, store, verification, clock } = setup();
    await memoryTransact((tx) => verification.queueInSignup(tx, { id: 'usr_ada', email: 'ada@example.com' }));
    const oldCode = outbox.last('email_verification').data.code;
    await ask();
    clock.advance(1_000);
    const user = await change.confirm(me, { code: outbox.last('email_change').data.code });
    expect(user).toMatchObject({ id: 'usr_ada', email: 'ada@new.example.com', email_verified: true });
    expect(store.users.get('usr_ada')!.email_verified_at).toEqual(clock.now());
    expect([...store.sessions.values()].map((s) => [s.id, s.revoked_reason])).toEqual([
      ['ses_here', null],
      ['ses_phone', 'email_changed'],
      ['ses_bob', null],
    ]);
    expect(outbox.facts.map((f) => f.session_id)).toEqual(['ses_phone']);
    // The verification code of the old address proves that address only.
    expect((await refusalOf(verification.verify({ email: 'ada@example.com', code: oldCode }))).code).toBe('invalid_code');
    // Once.
    expect((await refusalOf(change.confirm(me, { code: outbox.last('email_change').data.code }))).code).toBe('invalid_code');
  });

  it('with the link token, signed in to the same account only; another account\'s token is as unknown', async () => {
    const { ask, change, outbox } = setup();
    await ask();
    const { token } = outbox.last('email_change').data;
    expect((await refusalOf(change.confirm({ user_id: 'usr_bob', session_id: 'ses_bob' }, { token }))).code).toBe('invalid_code');
    expect((await change.confirm({ user_id: 'usr_ada', session_id: 'ses_here' }, { token })).email).toBe('ada@new.example.com');
  });

  it('refuses with 409 an address another account took meanwhile, and changes nothing', async () => {
    const { ask, change, me, outbox, store } = setup();
    await ask();
    store.addUser('usr_cleo', 'ada@new.example.com');
    const refusal = await refusalOf(change.confirm(me, { code: outbox.last('email_change').data.code }));
    expect([refusal.code, refusal.status, refusal.message]).toEqual(['email_taken', 409, expect.stringMatching(/was taken by another account/)]);
    expect(store.users.get('usr_ada')!.email).toBe('ada@example.com');
    expect([...store.sessions.values()].every((s) => s.revoked_at === null)).toBe(true);
  });

  it('kills a code after 5 wrong attempts, the right one then too; the link still works', async () => {
    const { ask, change, me, outbox } = setup();
    await ask();
    const { code, token } = outbox.last('email_change').data;
    const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
    for (let i = 0; i < 5; i++) expect((await refusalOf(change.confirm(me, { code: wrong }))).code).toBe('invalid_code');
    expect((await refusalOf(change.confirm(me, { code }))).code).toBe('invalid_code');
    expect((await change.confirm(me, { token })).email).toBe('ada@new.example.com');
  });
});
