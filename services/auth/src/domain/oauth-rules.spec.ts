/** The rules of outside providers, alone: what a sign-in does, who may link, what may be unlinked. */
import type { UserRow } from '../repo/user.repository';
import { linkOutcome, providerEmail, signInOutcome, unlinkRefusal } from './oauth-rules';

const at = new Date('2026-11-28T12:00:00.000Z');
const account = (over: Partial<UserRow> = {}): UserRow => ({
  id: 'usr_ada',
  email: 'ada@example.com',
  password_hash: 'hash',
  name: null,
  email_verified_at: at,
  created_at: at,
  updated_at: at,
  deleted_at: null,
  ...over,
});
const identity = { subject: 's1', email: 'ada@example.com', emailVerified: true, name: 'Ada' };

describe('signInOutcome', () => {
  it('signs the linked account in, whatever the address says', () => {
    expect(signInOutcome({ provider: 'acme', identity: { ...identity, email: null, emailVerified: false }, linkedAccount: account(), accountOfEmail: undefined })).toEqual({ kind: 'sign_in', user: account() });
  });

  it('refuses an identity linked to a deleted account', () => {
    expect(signInOutcome({ provider: 'acme', identity, linkedAccount: null, accountOfEmail: account() })).toMatchObject({ kind: 'refuse', error: { code: 'forbidden' } });
  });

  it('links to the account of the address only when the provider says it is verified', () => {
    expect(signInOutcome({ provider: 'acme', identity, linkedAccount: undefined, accountOfEmail: account() })).toEqual({ kind: 'link', user: account(), takeOver: false });
    const refused = signInOutcome({ provider: 'acme', identity: { ...identity, emailVerified: false }, linkedAccount: undefined, accountOfEmail: account() });
    expect(refused).toMatchObject({ kind: 'refuse', error: { code: 'email_taken', status: 409, message: expect.stringMatching(/sign in with your password, then link acme from your settings/) } });
  });

  it('takes over an account that never proved its address', () => {
    const unproven = account({ email_verified_at: null });
    expect(signInOutcome({ provider: 'acme', identity, linkedAccount: undefined, accountOfEmail: unproven })).toEqual({ kind: 'link', user: unproven, takeOver: true });
  });

  it('makes an account when none has the address, and refuses a provider that gave none', () => {
    expect(signInOutcome({ provider: 'acme', identity: { ...identity, emailVerified: false }, linkedAccount: undefined, accountOfEmail: undefined })).toEqual({ kind: 'create' });
    expect(signInOutcome({ provider: 'acme', identity: { ...identity, email: null }, linkedAccount: undefined, accountOfEmail: undefined })).toMatchObject({ kind: 'refuse', error: { code: 'unprocessable', status: 422 } });
  });

  it('reads the address as accounts store it', () => {
    expect(providerEmail(' Ada@Example.COM ')).toBe('ada@example.com');
    expect(providerEmail('not an address')).toBeNull();
    expect(providerEmail(undefined)).toBeNull();
  });
});

describe('linkOutcome', () => {
  it('links a free identity, keeps one linked already, refuses one of another account or a second of the provider', () => {
    expect(linkOutcome('acme', 'usr_ada', undefined, undefined)).toEqual({ kind: 'link' });
    expect(linkOutcome('acme', 'usr_ada', { user_id: 'usr_ada' }, { subject: 's1' })).toEqual({ kind: 'linked_already' });
    expect(linkOutcome('acme', 'usr_ada', { user_id: 'usr_eve' }, undefined)).toMatchObject({ kind: 'refuse', error: { code: 'conflict', message: expect.stringMatching(/linked to another Mailroom account/) } });
    expect(linkOutcome('acme', 'usr_ada', undefined, { subject: 's0' })).toMatchObject({ kind: 'refuse', error: { code: 'conflict', message: expect.stringMatching(/unlink it first/) } });
  });
});

describe('unlinkRefusal', () => {
  const configured = (name: string) => name !== 'gone';

  it('keeps the last way to sign in', () => {
    expect(unlinkRefusal('acme', { has_password: false }, ['acme'], configured)).toMatchObject({ code: 'conflict', status: 409, message: expect.stringMatching(/last way to sign in/) });
    // A link to a provider no longer configured signs nobody in.
    expect(unlinkRefusal('acme', { has_password: false }, ['acme', 'gone'], configured)).toMatchObject({ code: 'conflict' });
  });

  it('lets go of a provider when a password or another configured provider remains', () => {
    expect(unlinkRefusal('acme', { has_password: true }, ['acme'], configured)).toBeUndefined();
    expect(unlinkRefusal('acme', { has_password: false }, ['acme', 'github'], configured)).toBeUndefined();
    expect(unlinkRefusal('gone', { has_password: false }, ['acme', 'gone'], configured)).toBeUndefined();
  });

  it('does not find a provider that is not linked', () => {
    expect(unlinkRefusal('github', { has_password: true }, ['acme'], configured)).toMatchObject({ code: 'not_found', status: 404 });
  });
});
