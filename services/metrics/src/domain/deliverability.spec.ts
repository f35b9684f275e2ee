import type { MetricsCounts } from '@mailroom/contracts';
import { breachesOf, ratesOf, scoreOf, warningMessage } from './deliverability';

const counts = (c: Partial<MetricsCounts>): MetricsCounts => ({
  received: 0,
  sent: 0,
  delivered: 0,
  bounced_hard: 0,
  bounced_soft: 0,
  complained: 0,
  rejected: 0,
  rejected_by_reason: { blocked_recipient: 0, rate_limited: 0, account_paused: 0 },
  ...c,
});
const thresholds = { complaintRate: 0.001, hardBounceRate: 0.02 };

describe('deliverability', () => {
  it('has no rates nor score without sends', () => {
    const r = ratesOf(counts({ received: 5 }));
    expect(r).toEqual({ delivery: null, hard_bounce: null, soft_bounce: null, complaint: null, rejection: null });
    expect(scoreOf(r)).toBeNull();
  });

  it('scores clean sending 100 and takes the README formula off it', () => {
    expect(scoreOf(ratesOf(counts({ sent: 1000, delivered: 1000 })))).toBe(100);
    // 2% hard (-20), 4% soft (-10), 0.1% complaints (-10), 100 of 1100 rejected (-9.09)
    expect(scoreOf(ratesOf(counts({ sent: 1000, delivered: 940, bounced_hard: 20, bounced_soft: 40, complained: 1, rejected: 100 })))).toBe(51);
    expect(scoreOf(ratesOf(counts({ sent: 100, complained: 5 })))).toBe(0);
  });

  it('warns strictly above the thresholds', () => {
    expect(breachesOf(ratesOf(counts({ sent: 1000, complained: 1, bounced_hard: 20 })), thresholds)).toEqual([]);
    expect(breachesOf(ratesOf(counts({ sent: 1000, complained: 2, bounced_hard: 21 })), thresholds).map((b) => b.code)).toEqual(['complaint_rate', 'hard_bounce_rate']);
  });

  it('names the rate, the threshold and the inboxes in the message', () => {
    expect(warningMessage({ code: 'complaint_rate', rate: 0.002, threshold: 0.001 }, [{ inbox_id: 'inb_a' }])).toBe(
      'complaint rate 0.2% is above 0.1%: recipients mark this mail as spam: this harms sending reputation; most from inb_a',
    );
  });
});
