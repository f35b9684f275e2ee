/**
 * Complaints: RFC 5965 ARF (message/feedback-report), and the vendor formats that are not ARF.
 * What a report says, not what it means to us (domain/attribution.ts decides).
 */
import { findAddresses, firstAddress, stripAngles, unique } from './addresses';
import { decodeText, parseFields, parseHeaderBlock } from './mime';
import type { Report } from './report';
import type { ComplaintFeedback } from './types';

export function readArf(report: Report): ComplaintFeedback | null {
  const part = report.partsOf('message/feedback-report')[0];
  if (!part) return null;
  const f = parseFields(decodeText(part.body, part.charset), true);
  const original = report.originalHeaders();
  let recipients = f.all('original-rcpt-to').flatMap((v) => findAddresses(v));
  if (recipients.length === 0) recipients = f.all('removal-recipient').flatMap((v) => findAddresses(v));
  const mailFrom = f.get('original-mail-from');
  return {
    kind: 'complaint',
    feedbackType: (f.get('feedback-type') ?? '').toLowerCase().split(/[\s;]/)[0] || 'other',
    recipients: unique(recipients),
    originalMessageId: report.originalMessageId(),
    envelopeId: f.get('original-envelope-id'),
    originalMailFrom: firstAddress(mailFrom ?? original?.get('return-path') ?? ''),
    verpToken: report.verpToken(mailFrom ? [mailFrom] : []),
  };
}

// ---------------------------------------------------------------------------------------------
// Complaints in vendor formats that are not ARF:
// - Microsoft JMRP (Outlook.com junk reports): the reported message attached, its
//   X-HmXmrOriginalRecipient naming who complained;
// - Apple Mail's unsubscribe request (X-Apple-Unsubscribe: true): an opt-out by its sender
//   (feedbackType opt-out: an unsubscribe, not a spam complaint).

export function readVendorComplaint(report: Report): ComplaintFeedback | null {
  for (const p of report.partsOf('message/rfc822')) {
    const h = parseHeaderBlock(p.body);
    const who = h.all('x-hmxmroriginalrecipient').flatMap((v) => findAddresses(v));
    if (who.length === 0) continue;
    const id = h.get('message-id');
    return {
      kind: 'complaint',
      feedbackType: 'abuse',
      recipients: unique(who),
      originalMessageId: id ? stripAngles(id) : null,
      envelopeId: null,
      originalMailFrom: firstAddress(h.get('return-path') ?? ''),
      verpToken: report.verpToken(h.all('return-path')),
    };
  }
  if (/^\s*true\b/i.test(report.top.get('x-apple-unsubscribe') ?? '') && report.fromAddress) {
    return { kind: 'complaint', feedbackType: 'opt-out', recipients: [report.fromAddress], originalMessageId: null, envelopeId: null, originalMailFrom: null, verpToken: report.verpToken() };
  }
  return null;
}
