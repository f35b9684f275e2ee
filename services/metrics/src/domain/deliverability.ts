/**
 * Deliverability of a window from its counts: the rates, the score and the warnings. The
 * score's formula is the README's ("Metrics"); change both together.
 *
 *   score = 100 - 1000 x hard_bounce - 250 x soft_bounce - 10000 x complaint - 100 x rejection,
 *           rounded, at least 0
 *
 * so the warning thresholds cost: a 2% hard-bounce rate 20 points, a 0.1% complaint rate 10
 * (1% takes all 100), a 4% soft-bounce rate 10, 10% of sends rejected 10.
 */
import type { MetricsCounts } from '@mailroom/contracts';

export interface Rates {
  delivery: number | null;
  hard_bounce: number | null;
  soft_bounce: number | null;
  complaint: number | null;
  rejection: number | null;
}

export interface Thresholds {
  /** Complaint rate above which a warning is given (0.001 = 0.1%). */
  complaintRate: number;
  /** Hard-bounce rate above which a warning is given (0.02 = 2%). */
  hardBounceRate: number;
}

const per = (n: number, of: number): number | null => (of > 0 ? n / of : null);

export function ratesOf(c: MetricsCounts): Rates {
  return {
    delivery: per(c.delivered, c.sent),
    hard_bounce: per(c.bounced_hard, c.sent),
    soft_bounce: per(c.bounced_soft, c.sent),
    complaint: per(c.complained, c.sent),
    rejection: per(c.rejected, c.sent + c.rejected),
  };
}

export function scoreOf(r: Rates): number | null {
  if (r.rejection === null) return null;
  const penalty = 1000 * (r.hard_bounce ?? 0) + 250 * (r.soft_bounce ?? 0) + 10_000 * (r.complaint ?? 0) + 100 * r.rejection;
  return Math.max(0, Math.min(100, Math.round(100 - penalty)));
}

export interface Breach {
  code: 'complaint_rate' | 'hard_bounce_rate';
  rate: number;
  threshold: number;
}

/** The thresholds the rates pass (strictly above). */
export function breachesOf(r: Rates, t: Thresholds): Breach[] {
  const out: Breach[] = [];
  if (r.complaint !== null && r.complaint > t.complaintRate) out.push({ code: 'complaint_rate', rate: r.complaint, threshold: t.complaintRate });
  if (r.hard_bounce !== null && r.hard_bounce > t.hardBounceRate) out.push({ code: 'hard_bounce_rate', rate: r.hard_bounce, threshold: t.hardBounceRate });
  return out;
}

const pct = (x: number) => `${Number((x * 100).toPrecision(3))}%`;

export function warningMessage(b: Breach, top: readonly { inbox_id: string }[]): string {
  const what = b.code === 'complaint_rate' ? 'complaint rate' : 'hard-bounce rate';
  const harm = b.code === 'complaint_rate' ? 'recipients mark this mail as spam: this harms sending reputation' : 'mail goes to addresses that do not exist: clean the recipient lists';
  const inboxes = top.length ? `; most from ${top.map((t) => t.inbox_id).join(', ')}` : '';
  return `${what} ${pct(b.rate)} is above ${pct(b.threshold)}: ${harm}${inboxes}`;
}
