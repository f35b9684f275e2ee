/**
 * Amazon SES notifications mailed by SNS (an email subscription): a JSON object in the body,
 * bare or as the "Message" string of an SNS envelope. Those posted to our HTTP endpoint are
 * domain/ses-notifications.ts's.
 */
import { findAddresses, firstAddress, stripAngles, unique } from './addresses';
import { dedupeRecipients, enhancedIn, recipientOf, replyIn, subTypeOf } from './classify';
import { stripType } from './dsn';
import { MAX_RECIPIENTS, MAX_TEXT_CHARS } from './limits';
import type { Report } from './report';
import type { DsnRecipient, Feedback } from './types';

export function readSesJson(report: Report): Feedback | null {
  const text = report.notice(true);
  const start = text.search(/\{\s*"(?:notificationType|eventType|Type)"\s*:/);
  if (start === -1) return null;
  // Sendmail breaks lines over 990 characters with "!\n "; undo that before parsing.
  const json = balancedJson(text.slice(start).replace(/!\n /g, ''));
  let v = json ? parseJson(json) : null;
  if (isObject(v) && typeof v.Message === 'string' && v.notificationType === undefined) v = parseJson(v.Message);
  if (!isObject(v)) return null;
  const type = String(v.notificationType ?? v.eventType ?? '');
  const mail = isObject(v.mail) ? v.mail : {};
  const source = typeof mail.source === 'string' ? mail.source : null;
  const messageId = sesHeader(mail, 'message-id') ?? (typeof mail.messageId === 'string' ? mail.messageId : null);
  const verpToken = report.verpToken(source ? [source] : []);
  if (type === 'Complaint' && isObject(v.complaint)) {
    const c = v.complaint;
    const recipients = list(c.complainedRecipients).flatMap((r) => (isObject(r) ? findAddresses(String(r.emailAddress ?? '')) : []));
    return { kind: 'complaint', feedbackType: String(c.complaintFeedbackType ?? 'abuse').toLowerCase(), recipients: unique(recipients), originalMessageId: messageId, envelopeId: null, originalMailFrom: source ? firstAddress(source) : null, verpToken };
  }
  const recipients: DsnRecipient[] = [];
  let reportingMta: unknown = null;
  if (type === 'Bounce' && isObject(v.bounce)) {
    const b = v.bounce;
    reportingMta = b.reportingMTA;
    for (const r of list(b.bouncedRecipients)) {
      const address = isObject(r) ? firstAddress(String(r.emailAddress ?? '')) : null;
      if (!address || !isObject(r)) continue;
      const diag = String(r.diagnosticCode ?? '');
      const rec = recipientOf(address, 'failed', enhancedIn(String(r.status ?? '')) ?? enhancedIn(diag), replyIn(diag), diag, b.bounceType === 'Transient' ? 'Transient' : 'Permanent');
      // SES's own verdict wins where it gave one (it knows its suppression list).
      if (b.bounceType === 'Permanent' || b.bounceType === 'Transient') rec.bounceType = b.bounceType;
      if (b.bounceSubType === 'Suppressed' || b.bounceSubType === 'OnAccountSuppressionList') rec.bounceSubType = 'Suppressed';
      else if (b.bounceSubType === 'NoEmail') rec.bounceSubType = 'NoEmail';
      else rec.bounceSubType = subTypeOf(rec.bounceType, rec.status, diag);
      recipients.push(rec);
    }
  } else if (type === 'Delivery' && isObject(v.delivery)) {
    const d = v.delivery;
    reportingMta = d.reportingMTA;
    const response = String(d.smtpResponse ?? '');
    for (const r of list(d.recipients)) {
      const address = firstAddress(String(r));
      if (address) recipients.push(recipientOf(address, 'delivered', /\b2\.\d\.\d{1,3}\b/.exec(response)?.[0] ?? null, null, response, 'Permanent'));
    }
  } else if (type === 'DeliveryDelay' && isObject(v.deliveryDelay)) {
    for (const r of list(v.deliveryDelay.delayedRecipients)) {
      const address = isObject(r) ? firstAddress(String(r.emailAddress ?? '')) : null;
      if (!address || !isObject(r)) continue;
      const diag = String(r.diagnosticCode ?? '');
      recipients.push(recipientOf(address, 'delayed', enhancedIn(String(r.status ?? '')), replyIn(diag), diag, 'Transient'));
    }
  } else return null;
  return {
    kind: 'dsn',
    recipients: dedupeRecipients(recipients),
    envelopeId: null,
    originalMessageId: messageId,
    reportingMta: typeof reportingMta === 'string' ? stripType(reportingMta) : null,
    verpToken,
  };
}

function sesHeader(mail: Record<string, unknown>, name: string): string | null {
  for (const h of list(mail.headers)) {
    if (isObject(h) && String(h.name ?? '').toLowerCase() === name && typeof h.value === 'string') return stripAngles(h.value);
  }
  return null;
}

/** The JSON object at the start of `text`, by counting braces outside strings (linear). */
function balancedJson(text: string): string | null {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length && i < MAX_TEXT_CHARS; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return text.slice(0, i + 1).replace(/\n/g, '');
  }
  return null;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v.slice(0, MAX_RECIPIENTS) : [];
}
