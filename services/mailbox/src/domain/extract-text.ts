/**
 * extracted_text: the new text of a message, without the quoted history ("On ... wrote:"
 * attributions and `>` blocks, Outlook header blocks, original/forwarded separators) and
 * without a trailing signature. From the text part, or from the HTML part made visible
 * text when there is no text part. Pure and linear in the input: every rule looks at a
 * bounded window of lines, and lines over 1,000 characters are never taken for headers.
 *
 * No npm library reached our bar on the shared corpora (talon, github/email_reply_parser):
 * the ports of email_reply_parser take minutes on long quoted input, the talon ports keep
 * signatures and some quotes. Scores and the choice are in docs/decisions.md.
 */
import { convert } from 'html-to-text';
import { MAX_MARKER_LINE, headerField, isAttribution, isBareAttribution, isDeviceLine, isSeparator, mayOpenAttribution, startsWithOpener } from './extract-text.markers';

/** HTML as the text a reader sees: blockquotes become `> ` lines, links and images their visible text. */
export function htmlToVisibleText(html: string): string {
  return convert(html, {
    wordwrap: false,
    // Untrusted input: deep <blockquote> chains overflow the converter's stack; bound it.
    limits: { maxDepth: 100, maxInputLength: 4_000_000, ellipsis: '' },
    selectors: [
      { selector: 'a', options: { ignoreHref: true } },
      { selector: 'img', format: 'skip' },
      { selector: 'hr', options: { length: 10 } },
      ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } })),
      { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false } },
    ],
  });
}

/** `>` quotes, Supercite's `JD> ` and `|` quotes (a table row, closed by `|`, is not one). */
const QUOTED = /^[ \t]*(?:>|\p{Lu}[\p{L}\p{N}]{0,3}>(?:[ >]|$)|\|(?![-:| ]*$))/u;
const TABLE_ROW = /\|\s*$/;
const BLANK = /^\s*$/;
const RULE = /^\s*[-_=*~]{3,}\s*$/;
const GMAIL_MARK = /^\s*\u1427\s*$/;
const DATEISH = /\b\d{4}\b|\b\d{1,2}[:./-]\d{2}\b/;
const SIG_DELIM = /^(?:--|-- |_{2,}\s*)$/;
const SIG_DASH_NAME = /^(?:-\p{Lu}|-- ?\p{Lu})[\p{L}.'’ -]{0,40}$/u;

const wordCount = (s: string) => s.trim().split(/\s+/).length;
const isQuoted = (line: string) => QUOTED.test(line) && !(line.trimStart().startsWith('|') && TABLE_ROW.test(line));

/**
 * Lines of the header block starting at line i ("From:", "Sent:", "To:", "Subject:" in any
 * listed language; single blank lines between fields, as HTML paragraphs leave them), or 0.
 */
function headerBlockAt(lines: string[], i: number): number {
  const first = headerField(lines[i]!);
  if (!first) return 0;
  let fields = 0;
  let hasFrom = false;
  let hasDate = false;
  let hasSubject = false;
  let hasAddress = false;
  let end = i;
  for (let j = i; j < lines.length && j < i + 16 && !isQuoted(lines[j]!); j++) {
    if (BLANK.test(lines[j]!)) {
      if (j + 1 < lines.length && headerField(lines[j + 1]!)) continue;
      break;
    }
    end = j + 1;
    const f = headerField(lines[j]!);
    if (!f) continue; // a wrapped To: or Subject: line
    fields++;
    hasFrom ||= f.kind === 'from';
    hasDate ||= f.kind === 'date';
    hasSubject ||= f.kind === 'subject';
    hasAddress ||= /@|mailto:/.test(f.value);
  }
  // "From: Name <addr>" alone opens history; otherwise a From and another field with a date,
  // a subject or an address ("From: sales / To: all staff" is a memo), or three fields with a date.
  const fromWithAddress = first.kind === 'from' && /@|mailto:/.test(first.value);
  const ok = fromWithAddress || (hasFrom && fields >= 2 && (hasDate || hasSubject || hasAddress)) || (hasDate && fields >= 3);
  return ok ? end - i : 0;
}

/** A line that may continue a wrapped attribution: not blank, not quoted, except the `>` that closes a wrapped `<address`. */
function continues(joined: string, line: string): boolean {
  if (BLANK.test(line) || line.length > MAX_MARKER_LINE) return false;
  if (!isQuoted(line)) return true;
  return /^\s*>\s*\S{0,12}\s*\S{0,12}$/.test(line) && joined.lastIndexOf('<') > joined.lastIndexOf('>');
}

/** Length (1-3 lines) of an attribution starting at line i, or 0. */
function attributionAt(lines: string[], i: number): number {
  let joined = '';
  for (let k = 0; k < 3 && i + k < lines.length; k++) {
    const l = lines[i + k]!;
    if (k === 0 ? BLANK.test(l) || isQuoted(l) || l.length > MAX_MARKER_LINE : !continues(joined, l)) return 0;
    joined += (k && !joined.endsWith('<') && !l.trimStart().startsWith('>') ? ' ' : '') + l.trim();
    if (isAttribution(joined)) return k === 0 || mayOpenAttribution(lines[i]!) ? k + 1 : 0;
  }
  return 0;
}

/** Length of the history marker (separator, header block, attribution) at line i, or 0. */
function markerAt(lines: string[], i: number): number {
  const line = lines[i]!;
  if (line.length > MAX_MARKER_LINE) return 0;
  if (isSeparator(line)) return 1;
  const header = headerBlockAt(lines, i);
  if (header) return header;
  const n = attributionAt(lines, i);
  // A sentence above an attribution is not its first half: "... by 10:00.\nOn Mon ... wrote:"
  // keeps the text line; "02.04.2012 14:20 <name> <\naddr> wrote:" is one attribution.
  if (n > 1 && attributionAt(lines, i + 1) && (/[.!?。！？]$/.test(line.trim()) || startsWithOpener(lines[i + 1]!))) return 0;
  return n;
}

/** Drops lines i-2..i when the first of them carries a date or time ("26.06.2014, 14:41, "A" <a@b>:"). */
function dropDatedAttribution(lines: string[], drop: Uint8Array, i: number): void {
  for (let k = 0; k < 3 && i - k >= 0; k++) {
    const first = lines[i - k]!;
    if (BLANK.test(first) || drop[i - k]) return;
    if (DATEISH.test(first)) {
      for (let d = i - k; d <= i; d++) drop[d] = 1;
      return;
    }
  }
}

function nextNonBlank(lines: string[], i: number): number {
  while (i < lines.length && BLANK.test(lines[i]!)) i++;
  return i;
}

/**
 * Removes quoted history; keeps new text written between or below quotes. A marker
 * (attribution, header block, separator) above a quoted block is dropped with the block and
 * the text after it is kept (bottom-posting, inline answers); a marker above unquoted text
 * ends the new text. So does a device line ("Sent from my iPhone") below new text, which
 * iOS and Outlook mobile put above unmarked history (kept when `keepSignature`).
 */
export function stripQuotes(lines: string[], keepSignature = false): string[] {
  const drop = new Uint8Array(lines.length);
  let cut = lines.length; // from here on everything is history
  let seenText = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (isQuoted(line)) {
      drop[i] = 1;
      continue;
    }
    if (BLANK.test(line)) continue;
    const n = markerAt(lines, i);
    if (n) {
      const next = nextNonBlank(lines, i + n);
      if (next < lines.length && isQuoted(lines[next]!)) {
        for (let k = i; k < i + n; k++) drop[k] = 1;
        i += n - 1;
        continue;
      }
      cut = i;
      break;
    }
    if (isDeviceLine(line)) {
      if (seenText) {
        cut = keepSignature ? i + 1 : i;
        break;
      }
      if (!keepSignature) drop[i] = 1;
      continue;
    }
    // A generic attribution: up to 3 lines ending with ':' just above a `>` block, the first
    // carrying a date or time ("26.06.2014, 14:41, "A" <a@b>:"), or one with a verb ("Bob writes:").
    if (/[:：]\s*$/.test(line) && line.length <= MAX_MARKER_LINE) {
      const next = nextNonBlank(lines, i + 1);
      if (next < lines.length && isQuoted(lines[next]!)) {
        if (isBareAttribution(line)) drop[i] = 1;
        else dropDatedAttribution(lines, drop, i);
      }
    }
    seenText ||= !drop[i];
  }
  // Kept runs of lines, trimmed of blank edges and of a separator left above a cut.
  const segments: string[][] = [];
  let current: string[] = [];
  for (let i = 0; i < cut; i++) {
    if (drop[i]) {
      if (current.length) segments.push(current);
      current = [];
    } else {
      current.push(lines[i]!);
    }
  }
  if (current.length) segments.push(current);
  const out: string[] = [];
  for (const seg of segments) {
    let a = 0;
    let b = seg.length;
    while (a < b && BLANK.test(seg[a]!)) a++;
    while (b > a && (BLANK.test(seg[b - 1]!) || RULE.test(seg[b - 1]!))) b--;
    if (a === b) continue;
    if (out.length) out.push('');
    out.push(...seg.slice(a, b));
  }
  return out;
}

/** Removes a trailing signature: after a `-- `/`--`/`__` delimiter, or a last "-Name" or device line. */
export function stripSignature(input: string[]): string[] {
  const lines = input.slice();
  let seenText = false;
  for (let i = 0; i < lines.length; i++) {
    if (seenText && SIG_DELIM.test(lines[i]!)) {
      lines.length = i;
      break;
    }
    seenText ||= !BLANK.test(lines[i]!);
  }
  for (let guard = 0; guard < 3; guard++) {
    while (lines.length && BLANK.test(lines[lines.length - 1]!)) lines.pop();
    const n = lines.length;
    if (n < 3 || !BLANK.test(lines[n - 2]!)) break; // must stand alone after a blank line
    const last = lines[n - 1]!.trim();
    if ((SIG_DASH_NAME.test(last) && wordCount(last) <= 3) || isDeviceLine(last)) {
      lines.length = n - 1;
    } else {
      break;
    }
  }
  while (lines.length && BLANK.test(lines[lines.length - 1]!)) lines.pop();
  return lines;
}

export interface ExtractOptions {
  stripSignature?: boolean;
}

export function extractText(input: { text?: string | null; html?: string | null }, opts: ExtractOptions = {}): string {
  const fromHtml = !input.text?.trim() && Boolean(input.html);
  let source = fromHtml ? htmlToVisibleText(input.html ?? '') : (input.text ?? '');
  source = source
    .replace(/\r\n?/g, '\n')
    .replace(/[\u00a0\u2007\u202f]/g, ' ')
    .replace(/[\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]/g, '');
  let lines = source.split('\n').map((l) => l.replace(/\s+$/u, ''));
  if (fromHtml) {
    // Converters emit runs of empty paragraphs: keep at most one blank line.
    lines = lines.filter((l, i) => !(l === '' && i > 0 && lines[i - 1] === ''));
  }
  lines = lines.map((l) => (GMAIL_MARK.test(l) ? '' : l));
  lines = stripQuotes(lines, opts.stripSignature === false);
  if (opts.stripSignature !== false) lines = stripSignature(lines);
  return lines.join('\n').trim();
}
