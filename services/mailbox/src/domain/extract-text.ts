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
import { isDeviceLine, subjectCore, subjectKind } from './extract-text.markers';
import { stripQuotes } from './extract-text.quotes';

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
      // Outlook desktop writes every line as a <p class=MsoNormal> with no margin: lines, not paragraphs.
      { selector: 'p.MsoNormal', format: 'block', options: { leadingLineBreaks: 1, trailingLineBreaks: 1 } },
    ],
  });
}

const BLANK = /^\s*$/;
const GMAIL_MARK = /^\s*\u1427\s*$/;
const SIG_DELIM = /^(?:--|-- |_{2,}\s*)$/;
const SIG_DASH_NAME = /^(?:-\p{Lu}|-- ?\p{Lu})[\p{L}.'’ -]{0,40}$/u;

const wordCount = (s: string) => s.trim().split(/\s+/).length;

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
    // A device-like line that a line ending with ":" introduces is text ("The IT page says:\n\nGet Outlook for Android").
    const introduced = n >= 3 && /[:：]\s*$/.test(lines[n - 3]!);
    if ((SIG_DASH_NAME.test(last) && wordCount(last) <= 3) || (isDeviceLine(last) && !introduced)) {
      lines.length = n - 1;
    } else {
      break;
    }
  }
  while (lines.length && BLANK.test(lines[lines.length - 1]!)) lines.pop();
  return lines;
}

/** Lines with runs of blank lines made one. */
const oneBlankApart = (lines: string[]) => lines.filter((l, i) => !(l === '' && i > 0 && lines[i - 1] === ''));

export interface ExtractOptions {
  stripSignature?: boolean;
}

/**
 * The new text of a message. Its `subject`, when given, tells an Outlook forward ("FW: x" above a
 * header block that carries no marker of a forward) from a reply to a forward ("RE: FW: x").
 */
export function extractText(input: { text?: string | null; html?: string | null; subject?: string | null }, opts: ExtractOptions = {}): string {
  const fromHtml = !input.text?.trim() && Boolean(input.html);
  const written = (fromHtml ? htmlToVisibleText(input.html ?? '') : (input.text ?? ''))
    .replace(/\r\n?/g, '\n')
    .replace(/[\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]/g, '');
  // The rules read non-breaking spaces as spaces.
  const source = written.replace(/[\u00a0\u2007\u202f]/g, ' ');
  let lines = source.split('\n').map((l) => l.trimEnd());
  const spaced = lines;
  if (fromHtml) {
    // Converters emit runs of empty paragraphs: keep at most one blank line.
    lines = oneBlankApart(lines);
  }
  if (source.includes('\u1427')) lines = lines.map((l) => (GMAIL_MARK.test(l) ? '' : l));
  const { reply, forward, gap } = stripQuotes(lines, {
    keepSignature: opts.stripSignature === false,
    quotedForwards: fromHtml,
    subjectSays: subjectKind(input.subject),
    subject: input.subject ? subjectCore(input.subject) : undefined,
  });
  lines = opts.stripSignature === false ? reply : stripSignature(reply);
  // The forward as far below the new text as the sender put it, one blank line below a removed signature.
  const blanks = lines.length === reply.length ? gap : 1;
  // A forward HTML quoted (Apple Mail's <blockquote type=cite>) reads as it was written, without the quote's `> `.
  const forwarded = fromHtml && forward[0]?.startsWith('>') ? oneBlankApart(forward.map((l) => l.replace(/^>[ \t]?/, ''))) : forward;
  if (forwarded.length) lines = lines.length ? [...lines, ...new Array<string>(blanks).fill(''), ...forwarded] : forwarded;
  // A text part's lines are returned as written, non-breaking spaces and all.
  if (!fromHtml && source !== written) lines = asWritten(lines, spaced, written.split('\n'));
  return lines.join('\n').trim();
}

/**
 * The output lines as they were written: each is the first line at or after the previous one's
 * among the input's lines read with spaces (`spaced`) that it equals or begins (a line cut short
 * by an attribution run onto its end), replaced by as much of the same line of `written` (a
 * non-breaking space is one character, as its space is). Output lines are input lines in order,
 * so each is found and the search is linear.
 */
function asWritten(out: string[], spaced: string[], written: string[]): string[] {
  let j = 0;
  return out.map((line) => {
    if (!line) return line;
    let k = j;
    while (k < spaced.length && !spaced[k]!.startsWith(line)) k++;
    if (k === spaced.length) return line;
    j = k + 1;
    return written[k]!.slice(0, line.length);
  });
}
