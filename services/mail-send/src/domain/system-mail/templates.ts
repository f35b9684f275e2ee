/**
 * Every mail the platform sends on its own behalf, in one place: subject, plain text and
 * HTML per template of libs/contracts SYSTEM_MAIL_TEMPLATES. A template missing here fails
 * to compile. Values from callers (names, organization names) are escaped in the HTML.
 */
import type { SystemMail, SystemMailTemplate } from '@mailroom/contracts';

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

type DataOf<T extends SystemMailTemplate> = Extract<SystemMail, { template: T }>['data'];

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** Text paragraphs as a plain mail and as simple HTML (one <p> per paragraph; `code` parts in <code>). */
type Part = string | { code: string };
function mail(subject: string, paragraphs: Part[][]): RenderedMail {
  const text = paragraphs.map((p) => p.map((x) => (typeof x === 'string' ? x : x.code)).join('')).join('\n\n');
  const html = paragraphs.map((p) => `<p>${p.map((x) => (typeof x === 'string' ? escapeHtml(x) : `<code>${escapeHtml(x.code)}</code>`)).join('')}</p>`).join('\n');
  return {
    subject,
    text: `${text}\n\n-- \nMailroom\n`,
    html: `<!doctype html>\n<html><body style="font-family: sans-serif">\n${html}\n<p style="color: #666">Mailroom</p>\n</body></html>\n`,
  };
}

const day = (iso: string) => `${iso.slice(0, 16).replace('T', ' ')} UTC`;

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
};

export function renderSystemMail(m: SystemMail): RenderedMail {
  switch (m.template) {
    case 'ownership_transfer.requested':
      return TEMPLATES[m.template](m.data);
    case 'ownership_transfer.accepted':
      return TEMPLATES[m.template](m.data);
    case 'ownership_transfer.cancelled':
      return TEMPLATES[m.template](m.data);
    case 'invitation':
      return TEMPLATES[m.template](m.data);
  }
}
