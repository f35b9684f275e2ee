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

const MAX_HEADER_LINE = 1_000;

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

const QUOTED = /^[ \t]*>/;
const BLANK = /^\s*$/;
const RULE = /^\s*[-_=*~]{3,}\s*$/;
const ORIGINAL_SEP =
  /^\s*[-_=*]{2,}\s*(original message|forwarded message|message d'origine|message transféré|ursprüngliche nachricht|weitergeleitete nachricht|mensaje original|mensaje reenviado|messaggio originale|messaggio inoltrato|mensagem original|mensagem encaminhada|oorspronkelijk bericht|doorgestuurd bericht|исходное сообщение|пересылаемое сообщение)\s*[-_=*]{2,}\s*$/i;
const BEGIN_FWD = /^\s*(begin forwarded message|début du message réexpédié|anfang der weitergeleiteten nachricht)\s*:\s*$/i;
/** An Outlook-style header field ("From: x", "*Sent:* y"), localised names included. */
const FIELD = /^\s*\*?([\p{L}][\p{L}-]{0,14}(?: [\p{L}-]{1,10})?)\s*:\*?(?:\s|$)/u;
const FROM_NAMES = new Set(['from', 'de', 'von', 'da', 'van', 'fra', 'från', 'od', 'от', 'lähettäjä', 'feladó', 'kimden', 'afzender']);
const DATE_NAMES = new Set(['sent', 'date', 'envoyé', "date d'envoi", 'gesendet', 'datum', 'inviato', 'data', 'enviado', 'fecha', 'verzonden', 'skickat', 'отправлено', 'дата']);
const OTHER_NAMES = new Set([
  ...DATE_NAMES,
  ...['to', 'cc', 'bcc', 'subject', 'reply-to', 'à', 'objet', 'an', 'betreff', 'a', 'oggetto', 'para', 'asunto', 'assunto', 'aan', 'onderwerp', 'till', 'ämne', 'кому', 'тема', 'копия'],
]);
// "On <date>, <name> wrote:" in several languages, possibly over 3 lines: three independent
// tests instead of one pattern with gaps, so there is nothing to backtrack over.
const ON_START = /^\s*(?:on|le|am|el|il|em|op|den|w dniu|dnia|pe|в)\s/iu;
const ON_VERB = /(?:wrote|a écrit|schrieb|escribió|ha scritto|scrisse|escreveu|schreef|skrev|napisał|pisze|kirjoitti|написал)/iu;
const DATEISH = /\b\d{4}\b|\b\d{1,2}[:./-]\d{2}\b/;
const SIG_DELIM = /^(?:--|-- |_{2,}\s*)$/;
const SIG_DASH_NAME = /^(?:-\p{Lu}|-- ?\p{Lu})[\p{L}.'’ -]{0,40}$/u;
const SIG_MOBILE = /^(?:sent (?:from|with|via|using)|get outlook for|envoyé de|von meinem|enviado desde|enviado do|inviato da|отправлено с)\s[^,;!?]{1,60}$/iu;

const isOnWrote = (s: string) => s.length <= 600 && /:\s*$/.test(s) && ON_START.test(s) && ON_VERB.test(s);
const wordCount = (s: string) => s.trim().split(/\s+/).length;

function fieldName(line: string): string | null {
  if (line.length > MAX_HEADER_LINE) return null;
  const m = FIELD.exec(line);
  return m ? m[1]!.toLowerCase() : null;
}

/** Line i starts >= 3 header fields on consecutive lines, among them a From-type and a Sent/Date-type one. */
function isHeaderBlock(lines: string[], i: number): boolean {
  const first = fieldName(lines[i]!);
  if (!first || !(FROM_NAMES.has(first) || OTHER_NAMES.has(first))) return false;
  let fields = 0;
  let hasFrom = false;
  let hasDate = false;
  for (let j = i; j < lines.length && j < i + 8 && !BLANK.test(lines[j]!); j++) {
    const n = fieldName(lines[j]!);
    if (n && FROM_NAMES.has(n)) {
      hasFrom = true;
      fields++;
    } else if (n && OTHER_NAMES.has(n)) {
      hasDate ||= DATE_NAMES.has(n);
      fields++;
    }
  }
  return hasFrom && hasDate && fields >= 3;
}

/** Length (1-3 lines) of an "On ... wrote:" attribution starting at line i, or 0. */
function onWroteAt(lines: string[], i: number): number {
  let joined = '';
  for (let k = 0; k < 3 && i + k < lines.length; k++) {
    const l = lines[i + k]!;
    if (BLANK.test(l) || QUOTED.test(l) || l.length > MAX_HEADER_LINE) return 0;
    joined += (k ? ' ' : '') + l.trim();
    if (isOnWrote(joined)) return k + 1;
  }
  return 0;
}

function nextNonBlank(lines: string[], i: number): number {
  while (i < lines.length && BLANK.test(lines[i]!)) i++;
  return i;
}

/** Removes quoted history; keeps new text written between or below quotes. */
export function stripQuotes(lines: string[]): string[] {
  const drop = new Uint8Array(lines.length);
  let cut = lines.length; // from here on everything is history
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (QUOTED.test(line)) {
      drop[i] = 1;
      continue;
    }
    if (BLANK.test(line)) continue;
    if (ORIGINAL_SEP.test(line) || BEGIN_FWD.test(line) || isHeaderBlock(lines, i)) {
      cut = i;
      break;
    }
    const n = onWroteAt(lines, i);
    if (n) {
      const next = nextNonBlank(lines, i + n);
      if (next < lines.length && QUOTED.test(lines[next]!)) {
        // The attribution of a `>` block: drop it, keep whatever follows the block.
        for (let k = i; k < i + n; k++) drop[k] = 1;
        i += n - 1;
        continue;
      }
      // Attribution followed by unquoted history (iOS, HTML without blockquote).
      cut = i;
      break;
    }
    // A generic attribution: up to 3 lines ending with ':' just above a `>` block, the first
    // carrying a date or time ("26.06.2014, 14:41, "A" <a@b>:").
    if (/:\s*$/.test(line) && line.length <= MAX_HEADER_LINE) {
      const next = nextNonBlank(lines, i + 1);
      if (next < lines.length && QUOTED.test(lines[next]!)) {
        for (let k = 0; k < 3 && i - k >= 0; k++) {
          const first = lines[i - k]!;
          if (BLANK.test(first) || drop[i - k]) break;
          if (DATEISH.test(first)) {
            for (let d = i - k; d <= i; d++) drop[d] = 1;
            break;
          }
        }
      }
    }
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

/** Removes a trailing signature: after a `-- `/`--`/`__` delimiter, or a last "-Name" or "Sent from my ..." line. */
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
    if ((SIG_DASH_NAME.test(last) && wordCount(last) <= 3) || (SIG_MOBILE.test(last) && wordCount(last) <= 8)) {
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
    .replace(/[\u200b-\u200f\u2060\ufeff]/g, '');
  let lines = source.split('\n').map((l) => l.replace(/\s+$/u, ''));
  if (fromHtml) {
    // Converters emit runs of empty paragraphs: keep at most one blank line.
    lines = lines.filter((l, i) => !(l === '' && i > 0 && lines[i - 1] === ''));
  }
  lines = stripQuotes(lines);
  if (opts.stripSignature !== false) lines = stripSignature(lines);
  return lines.join('\n').trim();
}
