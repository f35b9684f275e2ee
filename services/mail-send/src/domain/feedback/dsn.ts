/**
 * RFC 3464 delivery status notifications: multipart/report with message/delivery-status or the
 * RFC 6533 global form; also DSN fields pasted into a text part.
 */
import { firstAddress } from './addresses';
import { dedupeRecipients, ENHANCED, enhancedIn, recipientOf, REPLY, replyIn } from './classify';
import { MAX_RECIPIENTS } from './limits';
import { decodeText, type Field, Fields, parseFields } from './mime';
import type { Report } from './report';
import type { DsnAction, DsnFeedback, DsnRecipient } from './types';

const ACTIONS: readonly DsnAction[] = ['failed', 'delayed', 'delivered', 'relayed', 'expanded'];
const RECIPIENT_FIELDS = new Set(['original-recipient', 'final-recipient', 'x-actual-recipient', 'action', 'status', 'remote-mta', 'diagnostic-code', 'last-attempt-date', 'final-log-id', 'will-retry-until']);

/**
 * Per-message fields and per-recipient groups of a delivery-status body. A recipient field seen
 * again opens the next group, so missing blank lines and any field order are read right.
 */
function dsnGroups(text: string): { perMessage: Field[]; perRecipient: Fields[] } {
  const perMessage: Field[] = [];
  const groups: { fields: Field[]; names: Set<string> }[] = [];
  let current: { fields: Field[]; names: Set<string> } | undefined;
  for (const f of parseFields(text, true).list) {
    if (RECIPIENT_FIELDS.has(f.name) && (!current || current.names.has(f.name))) {
      if (groups.length >= MAX_RECIPIENTS) break;
      current = { fields: [], names: new Set() };
      groups.push(current);
    }
    if (!current) perMessage.push(f);
    else {
      current.fields.push(f);
      current.names.add(f.name);
    }
  }
  return { perMessage, perRecipient: groups.map((g) => new Fields(g.fields)) };
}

export function stripType(v: string): string {
  return v.replace(/^[A-Za-z0-9-]{1,20}\s*;\s*/, '').trim();
}

export function readDsn(report: Report): DsnFeedback | null {
  const sources = report.partsOf('message/delivery-status', 'message/global-delivery-status').map((p) => decodeText(p.body, p.charset));
  if (sources.length === 0) {
    // DSN fields in a text part: some MTAs send them without the MIME type, or relays lose it.
    const text = report.notice(true);
    const at = text.search(/^(?:Reporting-MTA|Final-Recipient|Original-Recipient)\s*:/im);
    if (at !== -1 && /^Final-Recipient\s*:/im.test(text.slice(at)) && /^Action\s*:/im.test(text.slice(at))) sources.push(text.slice(at));
  }
  const perMessage: Field[] = [];
  const perRecipient: Fields[] = [];
  for (const s of sources) {
    const g = dsnGroups(s);
    perMessage.push(...g.perMessage);
    perRecipient.push(...g.perRecipient);
  }
  const notice = report.notice();
  const lowerNotice = notice.toLowerCase();
  const recipients: DsnRecipient[] = [];
  for (const g of perRecipient.slice(0, MAX_RECIPIENTS)) {
    const original = firstAddress(stripType(g.get('original-recipient') ?? ''));
    const address = original ?? firstAddress(stripType(g.get('final-recipient') ?? '')) ?? firstAddress(stripType(g.get('x-actual-recipient') ?? ''));
    if (!address) continue;
    const statusField = g.get('status') ?? '';
    const diagnostic = stripType(g.get('diagnostic-code') ?? '') || nearAddress(notice, lowerNotice, address);
    let status = enhancedIn(statusField) ?? /^2\.\d\.\d{1,3}/.exec(statusField.trim())?.[0] ?? null;
    // "5.0.0" next to a diagnostic that says "550 5.1.1": the diagnostic is more specific. A
    // status of the other class is not replaced: the reporting MTA decided (e.g. 4.x.x when it
    // treats a 5yz greeting as temporary).
    const fromDiagnostic = enhancedIn(diagnostic);
    if (fromDiagnostic && (!status || (status.endsWith('.0.0') && fromDiagnostic[0] === status[0]))) status = fromDiagnostic;
    const actionField = (g.get('action') ?? '').toLowerCase().split(/[\s(;]/)[0] ?? '';
    const action = ACTIONS.find((a) => a === actionField) ?? (status?.startsWith('2') ? 'delivered' : 'failed');
    recipients.push(recipientOf(address, action, status, replyIn(diagnostic), diagnostic, 'Permanent'));
  }
  if (recipients.length === 0) return null; // no usable recipient in the status part: read the notice instead
  const pm = new Fields(perMessage);
  const mta = pm.get('reporting-mta');
  return {
    kind: 'dsn',
    recipients: dedupeRecipients(recipients),
    envelopeId: pm.get('original-envelope-id'),
    originalMessageId: report.originalMessageId(),
    reportingMta: mta ? stripType(mta) : null,
    verpToken: report.verpToken(),
  };
}

/** The paragraph after `address` in the notice, when it carries a code (for status parts without Diagnostic-Code). */
function nearAddress(notice: string, lowerNotice: string, address: string): string {
  const i = lowerNotice.indexOf(address);
  if (i === -1) return '';
  const text = notice.slice(i + address.length, i + address.length + 600).split(/\n\s*\n/)[0] ?? '';
  return ENHANCED.test(text) || REPLY.test(text) ? text.replace(/^[>:\s]+/, '') : '';
}
