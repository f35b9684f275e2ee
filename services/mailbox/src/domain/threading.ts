/**
 * Threading, per inbox, the way Gmail does it: a message joins the thread of a message it
 * answers (In-Reply-To / References name its Message-ID) when their subjects agree once
 * reply and forward prefixes are removed; otherwise it starts a thread. Subject alone never
 * joins two messages.
 */
const PREFIX = /^\s*(?:re|fw|fwd|aw|wg|sv|vs|tr|antw|rif|ref|res|enc|odp|ynt|atb|r|i|rv|回复|转发|答复)\s*(?:\[\d+\]|\(\d+\))?\s*[:：]\s*/iu;
const LIST_TAG = /^\s*\[[^\]]{1,40}\]\s*/u;

export function normalizeSubject(subject: string): string {
  let s = subject.normalize('NFC');
  for (let guard = 0; guard < 20; guard++) {
    const next = s.replace(PREFIX, '').replace(LIST_TAG, (tag, offset: number) => (offset === 0 && PREFIX.test(s.slice(tag.length)) ? '' : tag));
    if (next === s) break;
    s = next;
  }
  return s.replace(/\s+/gu, ' ').trim().toLowerCase();
}

/** Whether a message with `subject` may join a thread whose normalized subject is `threadSubject`. */
export function subjectsAgree(subject: string, threadSubject: string): boolean {
  const mine = normalizeSubject(subject);
  return mine === threadSubject || mine === '' || threadSubject === '';
}

/** The Message-IDs a message answers, nearest first. */
export function parentIds(inReplyTo: string | null, references: string[]): string[] {
  const ids = [...(inReplyTo ? [inReplyTo] : []), ...references.slice().reverse()];
  return [...new Set(ids)].slice(0, 50);
}
