/**
 * Whom a report is about, and what a feedback report means. Pure: the report's words on one
 * side, the send's recipients on the other.
 */

/**
 * The recipients of a send that a report names: the named addresses the send went to (case
 * aside), in the send's spelling, once each. A name the send did not go to (a redacted
 * address, a forwarding target) names nobody. When nobody is named, the only recipient of a
 * send to one is the one it is about; of a send to several, it is about nobody we can name:
 * the original's To and Cc list everyone it was addressed to, not who reported it, and Bcc
 * recipients are in no header, so guessing would blame, and suppress, the wrong people.
 */
export function attributeRecipients(named: readonly string[], sentTo: readonly string[]): string[] {
  const byKey = new Map<string, string>();
  for (const a of sentTo) if (!byKey.has(a.toLowerCase())) byKey.set(a.toLowerCase(), a);
  const out = new Set<string>();
  for (const a of named) {
    const ours = byKey.get(a.toLowerCase());
    if (ours !== undefined) out.add(ours);
  }
  if (out.size > 0) return [...out];
  return byKey.size === 1 ? [...byKey.values()] : [];
}

/**
 * What a feedback report (ARF Feedback-Type, SES complaintFeedbackType) asks of us:
 * - complaint: a recipient reported the message as spam or fraud (abuse, fraud, virus, and
 *   other, RFC 5965's catch-all, also what a report without a type reads as): message.complained,
 *   and the address is suppressed;
 * - unsubscribe: the recipient asked for no more mail from this sender (opt-out; Apple Mail's
 *   unsubscribe request): the address is suppressed, and nobody is told of a complaint, since
 *   there was none;
 * - none: anything else changes nothing. not-spam (RFC 6430) says the opposite of a complaint;
 *   auth-failure (RFC 6591) is an authentication failure report, which no recipient made; an
 *   unknown type is not taken for a complaint.
 */
export function feedbackMeaning(feedbackType: string): 'complaint' | 'unsubscribe' | 'none' {
  const type = feedbackType.trim().toLowerCase();
  if (type === '' || type === 'abuse' || type === 'fraud' || type === 'virus' || type === 'other') return 'complaint';
  if (type === 'opt-out') return 'unsubscribe';
  return 'none';
}
