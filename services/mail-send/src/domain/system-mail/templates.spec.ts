/** The system mail templates: each renders a subject, text and HTML; callers' values are escaped in the HTML. */
import { newId, type PlatformMail } from '@mailroom/contracts';
import { escapeHtml, renderSystemMail } from './templates';

const transfer = { transfer_id: newId('ownershipTransfer'), org_name: 'Acme <Labs>', owner: 'Ada', new_owner: 'Grace & co' };
const token = `mri_${'A'.repeat(43)}`;
const mails: PlatformMail[] = [
  { id: newId('systemMail'), to: 'grace@example.com', template: 'ownership_transfer.requested', data: { ...transfer, recipient: 'new_owner', expires_at: '2026-12-02T10:00:00.000Z' } },
  { id: newId('systemMail'), to: 'ada@example.com', template: 'ownership_transfer.requested', data: { ...transfer, recipient: 'owner', expires_at: '2026-12-02T10:00:00.000Z' } },
  { id: newId('systemMail'), to: 'ada@example.com', template: 'ownership_transfer.accepted', data: { ...transfer, recipient: 'owner' } },
  { id: newId('systemMail'), to: 'grace@example.com', template: 'ownership_transfer.accepted', data: { ...transfer, recipient: 'new_owner' } },
  { id: newId('systemMail'), to: 'ada@example.com', template: 'ownership_transfer.cancelled', data: { ...transfer, recipient: 'owner' } },
  { id: newId('systemMail'), to: 'grace@example.com', template: 'ownership_transfer.cancelled', data: { ...transfer, recipient: 'new_owner' } },
  { id: newId('systemMail'), to: 'bob@example.com', template: 'invitation', data: { invitation_id: newId('invitation'), org_name: 'Acme', inviter: 'Ada', role: 'admin', token, expires_at: '2026-12-02T10:00:00.000Z' } },
];
const expiries = { code_expires_at: '2026-12-02T10:15:00.000Z', link_expires_at: '2026-12-03T10:00:00.000Z' };
const verification = { code: '012345', token: `mrv_${'V'.repeat(43)}`, link: `https://app.example.com/verify-email#token=mrv_${'V'.repeat(43)}&x="<y>"`, ...expiries };
const reset = { code: '987654', token: `mrp_${'P'.repeat(43)}`, link: `https://app.example.com/reset-password#token=mrp_${'P'.repeat(43)}`, ...expiries };
const accountMails: PlatformMail[] = [
  { id: newId('systemMail'), to: 'ada@example.com', template: 'email_verification', data: verification },
  { id: newId('systemMail'), to: 'ada@example.com', template: 'password_reset', data: reset },
  { id: newId('systemMail'), to: 'ada@example.com', template: 'password_changed', data: { how: 'reset', changed_at: '2026-12-02T10:05:00.000Z' } },
  { id: newId('systemMail'), to: 'ada@example.com', template: 'password_changed', data: { how: 'change', changed_at: '2026-12-02T10:05:00.000Z' } },
];

const change = { code: '246810', token: `mre_${'E'.repeat(43)}`, link: `https://app.example.com/confirm-email-change#token=mre_${'E'.repeat(43)}`, ...expiries };
const lifecycleMails: PlatformMail[] = [
  { id: newId('systemMail'), to: 'ada@new.example.com', template: 'email_change', data: change },
  { id: newId('systemMail'), to: 'ada@example.com', template: 'email_change_requested', data: { new_email: 'ada@new.example.com', requested_at: '2026-12-02T10:00:00.000Z' } },
  { id: newId('systemMail'), to: 'ada@example.com', template: 'account_deleted', data: { deleted_at: '2026-12-02T10:00:00.000Z', recover_before: '2027-01-01T10:00:00.000Z' } },
  { id: newId('systemMail'), to: 'ada@example.com', template: 'account_recovered', data: { recovered_at: '2026-12-09T10:00:00.000Z' } },
];

describe('system mail templates', () => {
  it('renders every template as subject, text and HTML, and escapes what callers give in the HTML', () => {
    for (const m of [...mails, ...accountMails, ...lifecycleMails]) {
      const r = renderSystemMail(m);
      expect(r.subject.length).toBeGreaterThan(0);
      expect(r.text).toMatch(/Mailroom/);
      expect(r.html).toMatch(/^<!doctype html>/);
      if (m.template.startsWith('ownership_transfer.')) {
        expect(r.text).toContain('Acme <Labs>');
        expect(r.html).toContain('Acme &lt;Labs&gt;');
        expect(r.html).not.toContain('<Labs>');
      }
    }
  });

  it('tells each party what they can do', () => {
    const [toNewOwner, toOwner] = mails.map(renderSystemMail);
    expect(toNewOwner!.text).toContain(`/api/v1/org/transfer-ownership/${transfer.transfer_id}/accept`);
    expect(toNewOwner!.text).toContain('2026-12-02 10:00 UTC');
    expect(toOwner!.text).toContain(`/api/v1/org/transfer-ownership/${transfer.transfer_id}/cancel`);
    const invite = renderSystemMail(mails[6]!);
    expect(invite.subject).toBe('Ada invited you to Acme on Mailroom');
    expect(invite.text).toContain(token);
    expect(invite.text).toMatch(/as an admin/);
    expect(invite.html).toContain(`<code>${token}</code>`);
  });

  it('gives the code, the link and the token of account mail, with their expiries; the reset code stays out of the subject', () => {
    const [verify, resetMail, afterReset, afterChange] = accountMails.map(renderSystemMail);
    expect(verify!.subject).toBe('Your Mailroom verification code: 012345');
    expect(verify!.text).toContain('Your code is 012345. It works once, until 2026-12-02 10:15 UTC.');
    expect(verify!.text).toContain(`Or open this link: ${verification.link} (until 2026-12-03 10:00 UTC).`);
    expect(verify!.text).toContain(`POST /api/v1/auth/verify-email with {"token": "${verification.token}"}`);
    expect(verify!.html).toContain('<code>012345</code>');
    // The link is a link, its characters escaped in the attribute and the text.
    const escaped = escapeHtml(verification.link);
    expect(verify!.html).toContain(`<a href="${escaped}">${escaped}</a>`);
    expect(verify!.html).not.toContain('"<y>"');
    expect(resetMail!.subject).toBe('Reset your Mailroom password');
    expect(resetMail!.subject).not.toContain(reset.code);
    expect(resetMail!.text).toContain(`POST /api/v1/auth/password/reset with {"token": "${reset.token}", "new_password": ...}`);
    expect(resetMail!.text).toContain('Your code is 987654.');
    expect(afterReset!.text).toMatch(/was reset .* on 2026-12-02 10:05 UTC\. Every session of the account was ended/);
    expect(afterChange!.text).toMatch(/Every other session of the account was ended/);
  });

  it('confirms a new address with code, link and API call; tells the old one without a link, and a deleted account until when it can come back', () => {
    const [confirm, notice, deleted, recovered] = lifecycleMails.map(renderSystemMail);
    expect(confirm!.subject).toBe('Confirm your new Mailroom address: 246810');
    expect(confirm!.text).toContain(`Or open this link: ${change.link} (until 2026-12-03 10:00 UTC).`);
    expect(confirm!.text).toContain(`POST /api/v1/user/me/change-email/confirm with {"token": "${change.token}"} or {"code": "246810"}`);
    expect(notice!.text).toContain('to ada@new.example.com. Nothing changes unless that address confirms it.');
    expect(notice!.text).toContain('POST /api/v1/user/me/change-password');
    expect(notice!.html).not.toContain('<a ');
    expect(deleted!.text).toContain('until 2027-01-01 10:00 UTC');
    expect(deleted!.text).toContain('POST /api/v1/user/me/recover');
    expect(recovered!.text).toMatch(/recovered on 2026-12-09 10:00 UTC/);
  });

  it('tells of the second factor and of new sign-ins, with what to do if it was not you; callers\' values escaped', () => {
    const at = '2026-12-02T10:05:00.000Z';
    const render = (template: string, data: unknown) => renderSystemMail({ id: newId('systemMail'), to: 'ada@example.com', template, data } as PlatformMail);
    expect(render('mfa_enabled', { enabled_at: at }).text).toMatch(/turned on .* on 2026-12-02 10:05 UTC/);
    expect(render('mfa_disabled', { disabled_at: at, with: 'recovery_code' }).text).toMatch(/turned off .* with a recovery code\./);
    expect(render('mfa_recovery_codes_regenerated', { regenerated_at: at }).text).toMatch(/previous ones no longer work/);
    const used = render('mfa_recovery_code_used', { used_at: at, codes_left: 1 });
    expect(used.text).toMatch(/1 code is left\.[\s\S]*You are running out/);
    expect(render('mfa_recovery_code_used', { used_at: at, codes_left: 9 }).text).toMatch(/9 codes are left/);
    const signIn = render('new_sign_in', { signed_in_at: at, ip: '203.0.113.7', user_agent: 'Mozilla/5.0 <script>', client: 'Firefox on Linux', with: 'password_and_mfa' });
    expect(signIn.subject).toBe('New sign-in to your Mailroom account');
    expect(signIn.text).toContain('from Firefox on Linux');
    expect(signIn.text).toContain('When: 2026-12-02 10:05 UTC');
    expect(signIn.text).toContain('IP address: 203.0.113.7');
    expect(signIn.text).toContain('User agent: Mozilla/5.0 <script>');
    expect(signIn.text).toContain('POST /api/v1/user/me/sessions/revoke-all');
    expect(signIn.html).toContain('Mozilla/5.0 &lt;script&gt;');
    expect(signIn.html).not.toContain('<script>');
    expect(render('new_sign_in', { signed_in_at: at, ip: null, user_agent: null, client: 'an unknown client', with: 'password' }).text).toContain('IP address: unknown');
  });

  it('escapes the five HTML characters', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });
});

describe('the lock-out notice', () => {
  const locked = (attempt: 'login' | 'password_reset' | 'email_verification' | 'mfa') =>
    renderSystemMail({ id: newId('systemMail'), to: 'ada@example.com', template: 'account_locked', data: { attempt, failures: 10, locked_at: '2026-12-02T10:05:00.000Z', locked_until: '2026-12-02T10:20:00.000Z' } });

  it('says what was refused until when, and advises a password reset, in text and HTML', () => {
    const login = locked('login');
    expect(login.subject).toBe('Your Mailroom account: sign-in locked after failed attempts');
    expect(login.text).toContain('There were 10 failed sign-ins for the Mailroom account of this address, the last on 2026-12-02 10:05 UTC.');
    expect(login.text).toContain('sign-ins with a password are refused until 2026-12-02 10:20 UTC, even the right ones.');
    expect(login.text).toMatch(/reset it: that also lifts the lock/);
    expect(login.text).toContain('reset your password (POST /api/v1/auth/password/reset-request)');
    expect(login.html).toContain('<code>POST /api/v1/auth/password/reset-request</code>');
    expect(locked('password_reset').text).toMatch(/attempts at the code of a password reset mail.*\n\nIf it was you, use the link of the reset mail instead/s);
    expect(locked('email_verification').subject).toMatch(/verification codes locked/);
    expect(locked('mfa').text).toMatch(/whoever tried knows your password/);
  });
});
