/**
 * A send's status only moves forward: queued -> sending -> sent -> delivered, and bounced,
 * complained or failed end it. It sums up a message to several recipients: `delivered` once
 * one is, `bounced` once one bounces, and a later delivery to another never overwrites
 * `bounced` (that delivery is still announced: events are per recipient, the status is not).
 */
import type { SendStatus } from '../repo/tables';

const RANK: Record<SendStatus, number> = { queued: 0, sending: 1, sent: 2, delivered: 3, bounced: 4, complained: 4, failed: 4 };

/** The statuses a send may move to `to` from. */
export function before(to: SendStatus): SendStatus[] {
  return (Object.keys(RANK) as SendStatus[]).filter((s) => RANK[s] < RANK[to] || (to === 'sending' && s === 'sending'));
}

export function isHandedOver(status: SendStatus): boolean {
  return RANK[status] >= RANK.sent;
}

/** Sub type of a bounce from its enhanced status: the address does not exist, or anything else. */
export function bounceSubType(status: string): 'NoEmail' | 'General' {
  return /^5\.1\.(1|2|3|10)$/.test(status) ? 'NoEmail' : 'General';
}
