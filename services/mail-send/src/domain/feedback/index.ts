/**
 * Delivery reports and complaint reports -> structured feedback about mail we sent.
 *
 * Owns reading, from the raw bytes of a message that came back to us, one format a module:
 * - dsn.ts: RFC 3464 delivery status notifications;
 * - arf.ts: RFC 5965 ARF complaints, Microsoft JMRP junk reports, Apple Mail's unsubscribe;
 * - ses.ts: Amazon SES notifications mailed by SNS (JSON: Bounce, Complaint, Delivery);
 * - plain.ts: the plain-text bounces of MTAs that send no DSN;
 * and, in all of them, which of our messages it is about: the original Message-ID and our VERP
 * token (report.ts). classify.ts turns codes and wording into a bounce type.
 *
 * Pure function over the bytes: no I/O, no clock. Work is bounded: input size, MIME parts,
 * header block size, scanned text and line length are capped (limits.ts); regular expressions
 * have no nested or overlapping unbounded quantifiers; addresses are found by scanning around '@'.
 */
import { readArf, readVendorComplaint } from './arf';
import { readDsn } from './dsn';
import { MAX_REPORT_BYTES } from './limits';
import { splitMime, type Part } from './mime';
import { readPlainBounce } from './plain';
import { Report } from './report';
import { readSesJson } from './ses';
import type { Feedback, OtherFeedback } from './types';

export { MAX_REPORT_BYTES } from './limits';
export type { BounceSubType, BounceType, ComplaintFeedback, DsnAction, DsnFeedback, DsnRecipient, Feedback, OtherFeedback } from './types';

const OTHER: OtherFeedback = { kind: 'other' };

export async function parseFeedback(raw: Buffer): Promise<Feedback> {
  if (raw.length === 0 || raw.length > MAX_REPORT_BYTES) return OTHER;
  let parts: Part[];
  try {
    parts = await splitMime(raw);
  } catch {
    return OTHER; // over a MIME limit (parts, header size) or unreadable
  }
  if (parts.length === 0) return OTHER;
  const report = new Report(parts);
  return readArf(report) ?? readVendorComplaint(report) ?? readSesJson(report) ?? readDsn(report) ?? readPlainBounce(report) ?? OTHER;
}
