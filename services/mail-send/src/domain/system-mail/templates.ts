/**
 * Every mail the platform sends on its own behalf, in one place: subject, plain text and
 * HTML per template of libs/contracts SYSTEM_MAIL_TEMPLATES (orgs' mail.system and auth's
 * mail.account). A template missing here fails to compile. Values from callers (names,
 * organization names, links) are escaped in the HTML.
 */
import type { PlatformMail, SystemMailTemplate } from '@mailroom/contracts';

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

type DataOf<T extends SystemMailTemplate> = Extract<PlatformMail, { template: T }>['data'];

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** Text paragraphs as a plain mail and as simple HTML (one <p> per paragraph; `code` parts in <code>, `link` parts as links). */
type Part = string | { code: string } | { link: string };
const asText = (x: Part) => (typeof x === 'string' ? x : 'code' in x ? x.code : x.link);
const asHtml = (x: Part) =>
  typeof x === 'string' ? escapeHtml(x) : 'code' in x ? `<code>${escapeHtml(x.code)}</code>` : `<a href="${escapeHtml(x.link)}">${escapeHtml(x.link)}</a>`;
function mail(subject: string, paragraphs: Part[][]): RenderedMail {
  const text = paragraphs.map((p) => p.map(asText).join('')).join('\n\n');
  const html = paragraphs.map((p) => `<p>${p.map(asHtml).join('')}</p>`).join('\n');
  return {
    subject,
    text: `${text}\n\n-- \nMailroom\n`,
    html: `<!doctype html>\n<html><body style="font-family: sans-serif">\n${html}\n<p style="color: #666">Mailroom</p>\n</body></html>\n`,
  };
}

const day = (iso: string) => `${iso.slice(0, 16).replace('T', ' ')} UTC`;

/** The end of every security notice: what to do if the change was not the person's. */
const NOT_YOU = 'If it was not you, someone else can sign in to your account: reset your password at once (POST /api/v1/auth/password/reset-request), revoke your sessions (POST /api/v1/user/me/sessions/revoke-all) and check the API keys of your organizations.';
const MFA_PROOF = { password: 'the password', authenticator: 'a code of the authenticator app', recovery_code: 'a recovery code' } as const;

/** The code, the link and the API call with its token, each with its expiry; then what to do if it was not you. */
function codeAndLink(d: DataOf<'email_verification' | 'password_reset'>, what: { call: string; extra?: string; notYou: string }): Part[][] {
  return [
    ['Your code is ', { code: d.code }, `. It works once, until ${day(d.code_expires_at)}.`],
    ['Or open this link: ', { link: d.link }, ` (until ${day(d.link_expires_at)}).`],
    ['With the API: ', { code: `POST ${what.call}` }, ` with {"token": "${d.token}"${what.extra ?? ''}}, or {"email": ..., "code": "${d.code}"${what.extra ?? ''}}.`],
    [what.notYou],
  ];
}

/** What the lock-out notice says of each kind of attempt. */
/** How a new sign-in proved who it was, in words. */
const SIGN_IN_PROOF: Record<DataOf<'new_sign_in'>['with'], string> = {
  password: 'the password',
  password_and_mfa: 'the password and a second-factor code',
  sso: "your organization's single sign-on",
  provider: 'an outside provider (OAuth)',
};

const LOCKED: Record<DataOf<'account_locked'>['attempt'], { subject: string; tries: string; refused: string; ifYou: string }> = {
  login: {
    subject: 'sign-in locked after failed attempts',
    tries: 'sign-ins',
    refused: 'sign-ins with a password are refused',
    ifYou: 'If it was you and the password is forgotten, reset it: that also lifts the lock.',
  },
  password_reset: {
    subject: 'reset codes locked after wrong attempts',
    tries: 'attempts at the code of a password reset mail',
    refused: 'reset codes are refused',
    ifYou: 'If it was you, use the link of the reset mail instead: it still works.',
  },
  email_verification: {
    subject: 'verification codes locked after wrong attempts',
    tries: 'attempts at the code of a verification mail',
    refused: 'verification codes are refused',
    ifYou: 'If it was you, use the link of the verification mail instead: it still works.',
  },
  mfa: {
    subject: 'second-factor codes locked after wrong attempts',
    tries: 'attempts at a second-factor code, after the right password',
    refused: 'second-factor codes are refused',
    ifYou: 'If it was you, wait until then. If not, whoever tried knows your password.',
  },
};

const TEMPLATES: { [T in SystemMailTemplate]: (data: DataOf<T>) => RenderedMail } = {
  'ownership_transfer.requested': (d) =>
    d.recipient === 'new_owner'
      ? mail(`${d.owner} asks you to take over ${d.org_name}`, [
          [`${d.owner} asks you to become the owner of the organization ${d.org_name} on Mailroom. They would stay on as an admin.`],
          ['To accept, sign in and call ', { code: `POST /api/v1/org/transfer-ownership/${d.transfer_id}/accept` }, '.'],
          [`The request expires on ${day(d.expires_at)}. If you do not want to take over, ignore this mail.`],
        ])
      : mail(`You asked ${d.new_owner} to take over ${d.org_name}`, [
          [`You asked ${d.new_owner} to become the owner of ${d.org_name}. Once they accept, you will be an admin.`],
          ['To cancel, call ', { code: `POST /api/v1/org/transfer-ownership/${d.transfer_id}/cancel` }, '.'],
          [`The request expires on ${day(d.expires_at)}.`],
        ]),
  'ownership_transfer.accepted': (d) =>
    d.recipient === 'new_owner'
      ? mail(`You now own ${d.org_name}`, [[`You accepted ${d.owner}'s request: you are now the owner of ${d.org_name}, and ${d.owner} is an admin.`]])
      : mail(`${d.new_owner} now owns ${d.org_name}`, [[`${d.new_owner} accepted your request: they are now the owner of ${d.org_name}, and you are an admin.`]]),
  'ownership_transfer.cancelled': (d) =>
    d.recipient === 'new_owner'
      ? mail(`${d.owner} cancelled the transfer of ${d.org_name}`, [[`${d.owner} cancelled their request that you become the owner of ${d.org_name}. Nothing changed.`]])
      : mail(`You cancelled the transfer of ${d.org_name}`, [[`You cancelled your request that ${d.new_owner} become the owner of ${d.org_name}. You are still the owner.`]]),
  invitation: (d) =>
    mail(`${d.inviter} invited you to ${d.org_name} on Mailroom`, [
      [`${d.inviter} invited you to join the organization ${d.org_name} on Mailroom as ${d.role === 'admin' ? 'an' : 'a'} ${d.role}.`],
      ['To accept, sign in (or sign up) with this email address and call ', { code: 'POST /api/v1/invitations/accept' }, ' with the token:'],
      [{ code: d.token }],
      [`The invitation works once and expires on ${day(d.expires_at)}. If you did not expect it, ignore this mail.`],
    ]),
  email_verification: (d) =>
    mail(`Your Mailroom verification code: ${d.code}`, [
      ['Confirm that this address is yours to finish setting up your Mailroom account.'],
      ...codeAndLink(d, { call: '/api/v1/auth/verify-email', notYou: 'If you did not sign up for Mailroom, ignore this mail: nothing happens without the code.' }),
    ]),
  password_reset: (d) =>
    mail('Reset your Mailroom password', [
      ['Someone, hopefully you, asked to reset the password of the Mailroom account of this address. Choose a new one with the code or the link below; every session of the account then ends.'],
      ...codeAndLink(d, { call: '/api/v1/auth/password/reset', extra: ', "new_password": ...', notYou: 'If it was not you, ignore this mail: your password stays as it is.' }),
    ]),
  password_changed: (d) =>
    mail('Your Mailroom password was changed', [
      [
        d.how === 'reset'
          ? `The password of your Mailroom account was reset with a code or link sent to this address, on ${day(d.changed_at)}. Every session of the account was ended.`
          : `The password of your Mailroom account was changed by someone signed in to it, on ${day(d.changed_at)}. Every other session of the account was ended.`,
      ],
      ['If it was not you, reset your password at once (', { code: 'POST /api/v1/auth/password/reset-request' }, ') and check the API keys of your organizations.'],
    ]),
  email_change: (d) =>
    mail(`Confirm your new Mailroom address: ${d.code}`, [
      ['Someone signed in to a Mailroom account asked to make this address its email address. It changes once you confirm, signed in to that account.'],
      ['Your code is ', { code: d.code }, `. It works once, until ${day(d.code_expires_at)}.`],
      ['Or open this link: ', { link: d.link }, ` (until ${day(d.link_expires_at)}).`],
      ['With the API: ', { code: 'POST /api/v1/user/me/change-email/confirm' }, ` with {"token": "${d.token}"} or {"code": "${d.code}"}.`],
      ['If you did not ask for this, ignore this mail: nothing changes without the code.'],
    ]),
  email_change_requested: (d) =>
    mail('Your Mailroom address is about to change', [
      [`On ${day(d.requested_at)}, someone signed in to your Mailroom account asked to change its email address to ${d.new_email}. Nothing changes unless that address confirms it.`],
      ['If it was not you, change your password at once (', { code: 'POST /api/v1/user/me/change-password' }, ', or ', { code: 'POST /api/v1/auth/password/reset-request' }, '), which ends every other session, and check the API keys of your organizations.'],
    ]),
  account_deleted: (d) =>
    mail('Your Mailroom account was deleted', [
      [`Your Mailroom account was deleted on ${day(d.deleted_at)}. Its sessions were ended and the API keys it created stopped working.`],
      [`You can bring it back, with everything it had, until ${day(d.recover_before)}: log in with your email and password, then call `, { code: 'POST /api/v1/user/me/recover' }, ' with the recovery_token of the answer.'],
      ['After that date the account, its memberships and the organizations it alone belonged to are deleted for good, and its API keys revoked.'],
    ]),
  account_recovered: (d) =>
    mail('Your Mailroom account was recovered', [
      [`Your deleted Mailroom account was recovered on ${day(d.recovered_at)} by someone who knew its password. It works again, with its API keys.`],
      ['If it was not you, reset your password at once (', { code: 'POST /api/v1/auth/password/reset-request' }, ') and check the API keys of your organizations.'],
    ]),
  mfa_enabled: (d) =>
    mail('Two-factor authentication is on for your Mailroom account', [
      [`Two-factor authentication was turned on for your Mailroom account on ${day(d.enabled_at)}: from now on, signing in asks for a code of your authenticator app after the password.`],
      ['Keep your recovery codes somewhere safe: each works once in place of a code, if you lose the authenticator.'],
      [NOT_YOU],
    ]),
  mfa_disabled: (d) =>
    mail('Two-factor authentication is off for your Mailroom account', [
      [`Two-factor authentication was turned off for your Mailroom account on ${day(d.disabled_at)}, with ${MFA_PROOF[d.with]}. Signing in now asks for the password only.`],
      [NOT_YOU],
    ]),
  mfa_recovery_codes_regenerated: (d) =>
    mail('New recovery codes for your Mailroom account', [
      [`New recovery codes were made for your Mailroom account on ${day(d.regenerated_at)}. The previous ones no longer work.`],
      [NOT_YOU],
    ]),
  mfa_recovery_code_used: (d) =>
    mail('A recovery code of your Mailroom account was used', [
      [`A recovery code was used in place of an authenticator code for your Mailroom account on ${day(d.used_at)}. It works no more; ${d.codes_left === 1 ? '1 code is' : `${d.codes_left} codes are`} left.`],
      [d.codes_left <= 2 ? 'You are running out: make new ones with ' : 'You can make new ones at any time with ', { code: 'POST /api/v1/user/me/mfa/recovery-codes' }, '.'],
      [NOT_YOU],
    ]),
  new_sign_in: (d) =>
    mail('New sign-in to your Mailroom account', [
      [`Your Mailroom account was signed in to from ${d.client}, a client it had not been used from in the last 90 days, with ${SIGN_IN_PROOF[d.with]}.`],
      [`When: ${day(d.signed_in_at)}`],
      [`IP address: ${d.ip ?? 'unknown'}`],
      [`User agent: ${d.user_agent ?? 'unknown'}`],
      ['If it was you, there is nothing to do. If not, change your password at once (', { code: 'POST /api/v1/user/me/change-password' }, ', or ', { code: 'POST /api/v1/auth/password/reset-request' }, '), revoke your other sessions (', { code: 'POST /api/v1/user/me/sessions/revoke-all' }, ') and turn on two-factor authentication.'],
    ]),
  account_locked: (d) => {
    const what = LOCKED[d.attempt];
    return mail(`Your Mailroom account: ${what.subject}`, [
      [`There were ${d.failures} failed ${what.tries} for the Mailroom account of this address, the last on ${day(d.locked_at)}. To protect the account, ${what.refused} until ${day(d.locked_until)}, even the right ones.`],
      [what.ifYou],
      ['If it was not you, someone may be guessing: reset your password (', { code: 'POST /api/v1/auth/password/reset-request' }, ') and choose one used nowhere else. Sessions already signed in go on.'],
    ]);
  },
  alert: (d) =>
    d.notice === 'firing'
      ? mail(`Mailroom alert firing: ${d.key}`, [
          [`The alert ${d.key} started firing on ${day(d.at)}.`],
          [d.detail],
          [`Rule: ${d.description}.`],
          ['See ', { code: 'GET /api/v1/admin/alerts' }, ' and ', { code: 'GET /api/v1/admin/health' }, '; acknowledge or mute it with ', { code: `PATCH /api/v1/admin/alerts/${d.key}` }, '.'],
        ])
      : mail(`Mailroom alert resolved: ${d.key}`, [[`The alert ${d.key} cleared on ${day(d.at)}.`], [d.detail], [`Rule: ${d.description}.`]]),
};

export function renderSystemMail(m: PlatformMail): RenderedMail {
  switch (m.template) {
    case 'ownership_transfer.requested':
      return TEMPLATES[m.template](m.data);
    case 'ownership_transfer.accepted':
      return TEMPLATES[m.template](m.data);
    case 'ownership_transfer.cancelled':
      return TEMPLATES[m.template](m.data);
    case 'invitation':
      return TEMPLATES[m.template](m.data);
    case 'email_verification':
      return TEMPLATES[m.template](m.data);
    case 'password_reset':
      return TEMPLATES[m.template](m.data);
    case 'password_changed':
      return TEMPLATES[m.template](m.data);
    case 'email_change':
      return TEMPLATES[m.template](m.data);
    case 'email_change_requested':
      return TEMPLATES[m.template](m.data);
    case 'account_deleted':
      return TEMPLATES[m.template](m.data);
    case 'account_recovered':
      return TEMPLATES[m.template](m.data);
    case 'mfa_enabled':
      return TEMPLATES[m.template](m.data);
    case 'mfa_disabled':
      return TEMPLATES[m.template](m.data);
    case 'mfa_recovery_codes_regenerated':
      return TEMPLATES[m.template](m.data);
    case 'mfa_recovery_code_used':
      return TEMPLATES[m.template](m.data);
    case 'new_sign_in':
      return TEMPLATES[m.template](m.data);
    case 'account_locked':
      return TEMPLATES[m.template](m.data);
    case 'alert':
      return TEMPLATES[m.template](m.data);
  }
}
