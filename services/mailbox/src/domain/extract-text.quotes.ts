/**
 * The quoted-history half of extracted_text: which lines of a message are history (`>`
 * blocks, attributions, header blocks, separators, what follows a device line) and which
 * are new text. One pass over the lines; each rule looks at a window of at most 16 lines,
 * and what a line is (blank, quoted, a header field) is computed once per line.
 */
import {
  type FieldKind,
  MAX_MARKER_LINE,
  attributionInside,
  endsWithDevice,
  fieldLabel,
  hasAttributionVerb,
  headerField,
  isAttribution,
  isBareAttribution,
  isDatedSender,
  isDeviceLine,
  isForwardSubject,
  isGroupWiseHeader,
  isReplyAbove,
  isUndatedAttribution,
  isVerbLedAttribution,
  mayOpenAttribution,
  separatorKind,
  startsWithOpener,
  subjectCore,
} from './extract-text.markers';

/**
 * `>` quotes, Supercite's `JD> ` and `|` quotes (a table row, closed by `|`, or its `|---|`
 * rule, is not one; a lone `|` is, the empty line of a `|`-quoted paragraph).
 */
const QUOTED = /^[ \t]*(?:>|\p{Lu}[\p{L}\p{N}]{0,3}>(?:[ >]|$)|\|[ \t]*$|\|(?![-:| ]*$))/u;
const TABLE_ROW = /\|\s*$/;
const BLANK = /^\s*$/;
const RULE = /^\s*[-_=*~]{3,}\s*$/;
const DATEISH = /\b(?:19|20)\d{2}\b|\b\d{1,2}[:./-]\d{2}\b/;
const SENTENCE_END = /[.!?。！？]$/;
/** A sender's name alone on a line, above the rest of its attribution ("John Smith\n<john@example.com> writes:"). */
const NAME_LINE = /^[\s*"'«]*[\p{L}][\p{L}\p{M}.'’ ,"»-]{0,60}$/u;
const ADDRESSED = /@|mailto:/;
const LOWER_START = /^\s*\p{Ll}/u;
const CLOSES_ADDRESS = /^\s*>\s*\S{0,12}\s*\S{0,12}$/;

function endsWithColon(line: string): boolean {
  const t = line.trimEnd();
  return t.endsWith(':') || t.endsWith('：');
}

/** A line ending inside `<http...`: a `>` opening the next line closes the link, it quotes nothing. */
function opensLink(line: string): boolean {
  const a = line.lastIndexOf('<');
  return a >= 0 && a > line.lastIndexOf('>') && /^<(?:https?|mailto):/i.test(line.slice(a, a + 8));
}

/** A field value that reads as a sentence: four words or more ending with `.`/`!`/`?`, no address. */
function isProse(value: string): boolean {
  const v = value.trim();
  return SENTENCE_END.test(v) && !ADDRESSED.test(v) && v.split(/\s+/).length >= 4;
}

const isQuoted = (line: string) => QUOTED.test(line) && !(line.trimStart().startsWith('|') && line.trim() !== '|' && TABLE_ROW.test(line));
/** Supercite's header, `>>>>> "Olivia" == Olivia Smith <o@x> writes:`: its name then quotes indented lines ("    Olivia> text"). */
const SUPERCITE_HEADER = /^>>>>> "([^"]{1,40})" ==/;
const NAMED_QUOTE = /^[ \t]+([\p{L}\p{N}]{1,40})>(?: |$)/u;

/** The lines of one message, with what each is, computed on first use. */
class Scan {
  readonly blank: Uint8Array;
  readonly quoted: Uint8Array;
  private readonly fields: ({ kind: FieldKind; value: string } | null | undefined)[];

  /** What the message's own subject says it is ("FW: x", "RE: x"), and that subject without its prefixes, when known. */
  constructor(
    readonly lines: string[],
    private readonly subjectSays?: 'forward' | 'reply',
    private readonly subject?: string,
  ) {
    this.blank = new Uint8Array(lines.length);
    this.quoted = new Uint8Array(lines.length);
    const named = new Set<string>(); // Supercite's names, from its headers above
    for (let i = 0; i < lines.length; i++) {
      const header = lines[i]!.startsWith('>>>>> "') ? SUPERCITE_HEADER.exec(lines[i]!) : null;
      if (header) named.add(header[1]!);
      if (BLANK.test(lines[i]!)) this.blank[i] = 1;
      else if (named.size && named.has(NAMED_QUOTE.exec(lines[i]!)?.[1] ?? '')) this.quoted[i] = 1;
      else if (isQuoted(lines[i]!) && !(i > 0 && !this.quoted[i - 1] && opensLink(lines[i - 1]!)) && !(lines[i]!.startsWith('>>> ') && isGroupWiseHeader(lines[i]!))) {
        this.quoted[i] = 1;
      }
    }
    this.fields = new Array(lines.length);
  }

  field(i: number) {
    if (this.fields[i] === undefined) this.fields[i] = this.quoted[i] ? null : headerField(this.lines[i]!);
    return this.fields[i];
  }

  nextNonBlank(i: number): number {
    while (i < this.lines.length && this.blank[i]) i++;
    return i;
  }

  /** Whether the next non-blank line after i is quoted. */
  quoteFollows(i: number): boolean {
    const next = this.nextNonBlank(i);
    return next < this.lines.length && this.quoted[next] === 1;
  }

  /**
   * Lines of the header block starting at line i ("From:", "Sent:", "To:", "Subject:" in any
   * listed language; single blank lines between fields, as HTML paragraphs leave them), or 0.
   */
  headerBlockAt(i: number): number {
    const first = this.field(i);
    if (!first) return 0;
    // A block starts at its first field.
    if (i > 0 && !this.blank[i - 1] && !this.quoted[i - 1] && this.field(i - 1)) return 0;
    let fields = 0;
    let hasFrom = false;
    let hasDate = false;
    let hasSubject = false;
    let hasAddress = false;
    let gaps = 0;
    let end = i;
    for (let j = i; j < this.lines.length && j < i + 16 && !this.quoted[j]; j++) {
      if (this.blank[j]) {
        if (j + 1 < this.lines.length && this.field(j + 1)) {
          gaps++;
          continue;
        }
        break;
      }
      end = j + 1;
      const f = this.field(j);
      if (!f) continue; // a wrapped To: or Subject: line
      fields++;
      // "De : toute façon personne n'était disponible." is a sentence, not a sender.
      hasFrom ||= f.kind === 'from' && !isProse(f.value);
      hasDate ||= f.kind === 'date';
      hasSubject ||= f.kind === 'subject' && this.answers(f.value);
      hasAddress ||= ADDRESSED.test(f.value);
    }
    // "From: Name <addr>" alone opens history; otherwise a From and another field with a date, an
    // address or the subject this message answers ("From: sales / To: all staff / Subject: closing"
    // is a memo), or three fields with a date.
    const fromWithAddress = first.kind === 'from' && ADDRESSED.test(first.value);
    // Fields apart (HTML paragraphs) must be a full block: three with a date.
    // A lone From stands apart from the text above it ("Reply to this address:\nFrom: a@b" is text).
    const apart = i === 0 || this.blank[i - 1] === 1 || RULE.test(this.lines[i - 1]!) || fields > 1;
    // Nor does a block that a line of text introduces, right above it or a blank line above
    // ("the form has these fields:\nFrom: your name\nTo: ...\nDate: ...", "Please use these settings:\n\nFrom:
    // a@b\nSubject: ..."), unless it is a full one with a date and an address ("see below:\nFrom: John
    // <j@x>\nSent: <date>\nTo: ...").
    const above = i > 0 && this.blank[i - 1] ? i - 2 : i - 1;
    const introduced = above >= 0 && !this.blank[above] && !this.quoted[above] && endsWithColon(this.lines[above]!);
    const ok = (!introduced && ((fromWithAddress && apart) || (gaps === 0 && hasFrom && fields >= 2 && (hasDate || hasAddress || hasSubject)))) || (hasDate && fields >= 3 && (!introduced || hasAddress));
    return ok ? end - i : 0;
  }

  /** Length (1-4 lines) of an attribution starting at line i, or 0. */
  attributionAt(i: number): number {
    const lines = this.lines;
    if (i >= lines.length || this.blank[i] || this.quoted[i] || lines[i]!.length > MAX_MARKER_LINE) return 0;
    // Every attribution has an address, a date, a time, an "On"-word or its verb in its first
    // line; opened by its verb alone, the next line starts with the sender's `<address>`, where the
    // client wrapped it ("Quoting John Smith\n<john@example.com>:"; not "Quoting the contract\nof
    // 20/03/2017 at 10:00:", nor "As I wrote yesterday, send it to\nbilling@example.com or me:").
    const byVerb = !mayOpenAttribution(lines[i]!);
    if (byVerb && !(hasAttributionVerb(lines[i]!) && this.addressNext(i + 1))) return 0;
    let joined = '';
    let found = 0;
    for (let k = 0; k < 4 && i + k < lines.length; k++) {
      const l = lines[i + k]!;
      if (k > 0 && !this.continues(joined, i + k)) break;
      joined += (k && !joined.endsWith('<') && !l.trimStart().startsWith('>') ? ' ' : '') + l.trim();
      if (!isAttribution(joined) || (byVerb && !joined.includes('@'))) continue;
      // One without its colon may go on: "Am 20. März 2017 10:00 schrieb\nJohn Smith <j@x>:" is one.
      if (endsWithColon(joined)) return k + 1;
      found ||= k + 1;
    }
    return found;
  }

  /** Whether line j opens with an `<address>`, where a wrapped "Quoting John Smith\n<john@example.com>:" goes on. */
  private addressNext(j: number): boolean {
    return j < this.lines.length && /^\s*<[^\s@<>]+@[^\s@<>]+/.test(this.lines[j]!);
  }

  /** A line that may continue a wrapped attribution: not blank, not quoted, except the `>` that closes a wrapped `<address`. */
  private continues(joined: string, j: number): boolean {
    const line = this.lines[j]!;
    if (this.blank[j] || line.length > MAX_MARKER_LINE) return false;
    if (!this.quoted[j]) return true;
    return CLOSES_ADDRESS.test(line) && joined.lastIndexOf('<') > joined.lastIndexOf('>');
  }

  /**
   * Lines of Lotus Notes' tabular reply header starting at line i, or 0: an indented paragraph
   * with the sender and date in its left column and the field names right-aligned ("To",
   * "cc", "Subject", each alone or as a row's last cell), a To, a date and a Subject alone on its row.
   */
  notesTableAt(i: number): number {
    if ((i > 0 && !this.blank[i - 1]) || !/^(?:\t| {4})/.test(this.lines[i]!)) return 0;
    let to = false;
    let dated = false;
    for (let j = i; j < this.lines.length && j < i + 16 && !this.quoted[j]; j++) {
      const label = this.blank[j] ? null : fieldLabel(this.lines[j]!);
      // The Subject label stands alone on its row ("Period    Teacher    Subject" heads a table).
      if (label?.kind === 'subject') return to && dated && label.alone ? this.nextNonBlank(j + 1) + 1 - i : 0;
      to ||= label?.kind === 'to';
      dated ||= DATEISH.test(this.lines[j]!);
    }
    return 0;
  }

  /**
   * Whether a header block's subject is the one this message answers or forwards ("Subject: RE:
   * budget" in a reply titled "RE: budget"): the mark of its history when the block has neither a
   * date nor an address. Unknown without the message's subject ("From: Amazon\nSubject: Re: your
   * order 123" in a customer's question is text).
   */
  private answers(value: string): boolean {
    return Boolean(this.subject) && subjectCore(value) === this.subject;
  }

  /**
   * Whether the header block of `n` lines at line i opens a forward: the message's own subject
   * says so ("FW: invoice" above Outlook's block of the invoice's mail) or says it is a reply ("RE:
   * FW: x" answers a forward: its block is history), else the block's subject says so ("FW: ...").
   */
  private forwardSubjectIn(i: number, n: number): boolean {
    if (this.subjectSays) return this.subjectSays === 'forward';
    for (let j = i; j < i + n; j++) {
      const f = this.field(j);
      if (f?.kind === 'subject' && isForwardSubject(f.value)) return true;
    }
    return false;
  }

  /**
   * The history marker (separator, header block, attribution) at line i: its length in lines
   * and whether it opens a forward (a forward separator, or a header block whose subject
   * says so, with or without an "-----Original Message-----" above it), or null.
   */
  markerAt(i: number): { lines: number; forward: boolean } | null {
    const line = this.lines[i]!;
    if (line.length > MAX_MARKER_LINE) return null;
    const separator = separatorKind(line);
    if (separator === 'forward') return { lines: 1, forward: true };
    if (separator === 'original') {
      const next = this.nextNonBlank(i + 1);
      const header = next < this.lines.length ? this.headerBlockAt(next) : 0;
      return { lines: 1, forward: this.subjectSays === 'forward' || (header > 0 && this.forwardSubjectIn(next, header)) };
    }
    if (isReplyAbove(line)) return { lines: 1, forward: false };
    const header = this.headerBlockAt(i);
    if (header) return { lines: header, forward: this.forwardSubjectIn(i, header) };
    if (line.startsWith('>>> ') && isGroupWiseHeader(line)) return { lines: 1, forward: false };
    const notes = this.notesTableAt(i);
    if (notes) return { lines: notes, forward: false };
    const n = this.attributionAt(i);
    // A sentence above an attribution is not its first half: "... by 10:00.\nOn Mon ... wrote:"
    // keeps the text line; "02.04.2012 14:20 <name> <\naddr> wrote:" is one attribution.
    const sentence = () => SENTENCE_END.test(line.trim());
    if (n === 0 || (n > 1 && this.attributionAt(i + 1) && (sentence() || startsWithOpener(this.lines[i + 1]!)))) return null;
    // One with neither an address nor a time opens history only above a quote: "On 14 February
    // 2017 the Supplier wrote:" above a passage in quotation marks is the sender's text.
    if (!this.quoteFollows(i + n) && isUndatedAttribution(this.lines.slice(i, i + n).join(' '))) return null;
    return { lines: n, forward: false };
  }

  /** Whether the first line after i that is not blank or a rule opens a forward. */
  forwardFollows(i: number): boolean {
    let j = this.nextNonBlank(i);
    while (j < this.lines.length && RULE.test(this.lines[j]!)) j = this.nextNonBlank(j + 1);
    return j < this.lines.length && this.markerAt(j)?.forward === true;
  }

  /** Drops lines i-2..i when the first of them carries a date or time ("26.06.2014, 14:41, "A" <a@b>:"). */
  dropDatedAttribution(drop: Uint8Array, i: number): void {
    for (let k = 0; k < 3 && i - k >= 0; k++) {
      if (this.blank[i - k] || drop[i - k]) return;
      if (DATEISH.test(this.lines[i - k]!)) {
        for (let d = i - k; d <= i; d++) drop[d] = 1;
        return;
      }
    }
  }
}

/**
 * Splits a message into its new text, without quoted history, and the forwarded message it
 * carries, if any. A marker (attribution, header block, separator) above a quoted block is
 * dropped with the block and the text after it is kept (bottom-posting, inline answers); a
 * marker above unquoted text ends the new text. So does a device line ("Sent from my
 * iPhone") below new text, which iOS and Outlook mobile put above unmarked history (kept
 * when `keepSignature`). A forward's marker ("---------- Forwarded message ---------",
 * "Begin forwarded message:", a header block or "Original Message" separator when the message's
 * own subject says forward, or, the subject unknown, a header block with "Subject: FW: ...") ends
 * the new text too,
 * but what follows it is new to the reader: it is returned whole as `forward`, with the
 * number of blank lines above it (`gap`). An
 * attribution run onto the end of a line of new text is cut off it.
 */
export function stripQuotes(
  input: string[],
  {
    keepSignature = false,
    quotedForwards = false,
    subjectSays,
    subject,
  }: { keepSignature?: boolean; quotedForwards?: boolean; subjectSays?: 'forward' | 'reply'; subject?: string } = {},
): { reply: string[]; forward: string[]; gap: number } {
  const lines = input.slice(); // a line may lose an attribution run onto its end
  const scan = new Scan(lines, subjectSays, subject);
  const drop = new Uint8Array(lines.length);
  let cut = lines.length; // from here on everything is history, or the forward
  let forward = false;
  let seenText = false;
  let quoteSeen = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (scan.quoted[i]) {
      if (quotedForwards && !quoteSeen && opensQuotedForward(scan, drop, i)) {
        cut = i;
        forward = true;
        break;
      }
      drop[i] = 1;
      quoteSeen = true;
      continue;
    }
    if (scan.blank[i]) continue;
    const inside = endsWithColon(line) ? attributionInside(line) : -1;
    if (inside > 0) {
      lines[i] = line.slice(0, inside).trimEnd();
      seenText = true;
      if (scan.quoteFollows(i + 1)) continue;
      cut = i + 1;
      break;
    }
    const marker = scan.markerAt(i);
    if (marker) {
      // An attribution that opens with the address ("<john@example.com> writes:") takes the
      // sender's name on the line above it, when that line starts a paragraph.
      if (i > 0 && /^\s*[<(]/.test(line) && isNameAbove(scan, i)) {
        i--;
        marker.lines++;
      }
      if (!marker.forward && scan.quoteFollows(i + marker.lines)) {
        for (let k = i; k < i + marker.lines; k++) drop[k] = 1;
        i += marker.lines - 1;
        continue;
      }
      cut = i;
      forward = marker.forward;
      break;
    }
    // A device line stands apart: a blank line above or below it (or the message's edge), or a
    // history marker right below it (HTML parts: "Merci !\nEnvoyé avec Proton Mail.\n------- Original
    // Message -------"); "Hi,\nSent from my phone while I travel\nPlease call" is a sentence, and so
    // is an inline answer between quoted lines ("> Did you send it?\nSent via DocuSign today.\n> ...").
    const apart = i === 0 || scan.blank[i - 1] === 1 || i + 1 >= lines.length || scan.blank[i + 1] === 1;
    if (isDeviceLine(line) && (apart || (!scan.quoted[i + 1] && scan.markerAt(i + 1) !== null)) && !isTextLine(scan, i)) {
      if (seenText && !scan.forwardFollows(i + 1)) {
        cut = keepSignature ? i + 1 : i;
        break;
      }
      if (!keepSignature) drop[i] = 1;
      continue;
    }
    // A generic attribution: up to 3 lines ending with ':' just above a `>` block, the first
    // carrying a date or time ("26.06.2014, 14:41, "A" <a@b>:"), or one with a verb ("Bob writes:");
    // or old Gmail's colonless "2011/7/15 John <j@x>", or alot's "Quoting John (2017-03-21 08:47:12)".
    if (line.length <= MAX_MARKER_LINE && endsWithColon(line) && scan.quoteFollows(i + 1)) {
      if (isBareAttribution(line)) drop[i] = 1;
      else scan.dropDatedAttribution(drop, i);
    } else if (scan.quoteFollows(i + 1) && (isDatedSender(line) || isVerbLedAttribution(line))) drop[i] = 1;
    seenText ||= !drop[i];
  }
  if (!forward) return { reply: keptText(lines, drop, cut), forward: [], gap: 0 };
  // The blank lines the sender left between the new text and the forward, or one where a device
  // line or a rule between them is dropped.
  let above = cut;
  while (above > 0 && scan.blank[above - 1]) above--;
  const gap = above > 0 && !drop[above - 1] && !RULE.test(lines[above - 1]!) ? Math.min(cut - above, 2) : 1;
  return { reply: keptText(lines, drop, cut), forward: keptText(lines, new Uint8Array(lines.length), lines.length, cut), gap };
}

/**
 * Whether the quote starting at line i is a forward: Apple Mail quotes what it forwards, with
 * "Begin forwarded message:" inside the quote in its HTML ("> Begin forwarded message:"), right
 * under the new text (a reply's attribution above it makes it quoted history again). Asked only
 * for HTML parts, and only for the message's first quote: in a text part a quoted forward is a
 * reply's history.
 */
function opensQuotedForward(scan: Scan, drop: Uint8Array, i: number): boolean {
  let above = i - 1;
  while (above >= 0 && scan.blank[above]) above--;
  if (above >= 0 && (scan.quoted[above] || drop[above])) return false;
  return separatorKind(scan.lines[i]!.replace(/^[ \t]*>[ \t]?/, '')) === 'forward';
}

/**
 * Whether the device-like line i is a line of text: it goes on in lower case on the next line and
 * does not end with a device ("Sent from my phone earlier but it bounced back, so here it is again
 * from\nmy laptop: ...", "Sent by courier this morning\nand it should reach you by Friday"),
 * or a line ending with ":" introduces it, right above or a blank line above ("To read your mail
 * on your phone:\n\nGet Outlook for iOS or Android from the App Store.").
 */
function isTextLine(scan: Scan, i: number): boolean {
  const next = i + 1;
  // Unless the line ends with its device ("Sent from my iPhone\nplease excuse typos", Yahoo's link below its line).
  if (next < scan.lines.length && !scan.quoted[next] && LOWER_START.test(scan.lines[next]!) && !endsWithDevice(scan.lines[i]!)) return true;
  const above = i > 0 && scan.blank[i - 1] ? i - 2 : i - 1;
  return above >= 0 && !scan.blank[above] && !scan.quoted[above] && endsWithColon(scan.lines[above]!);
}

/** Whether line i-1 is a sender's name alone, at the start of a paragraph (a line of at most 5 words, no sentence). */
function isNameAbove(scan: Scan, i: number): boolean {
  const name = scan.lines[i - 1]!;
  // "Yes, fine by me." above "<john@example.com> writes:" is the answer, not a name.
  if (scan.blank[i - 1] || scan.quoted[i - 1] || !NAME_LINE.test(name) || /[.!?,;:]\s*$/.test(name) || name.trim().split(/\s+/).length > 5) return false;
  return i === 1 || scan.blank[i - 2] === 1;
}

/** The kept runs of lines from `from` to `cut`, each trimmed of blank edges and of a rule left above a cut, one blank line apart. */
function keptText(lines: string[], drop: Uint8Array, cut: number, from = 0): string[] {
  const out: string[] = [];
  let i = from;
  while (i < cut) {
    while (i < cut && drop[i]) i++;
    let a = i;
    while (i < cut && !drop[i]) i++;
    let b = i;
    while (a < b && BLANK.test(lines[a]!)) a++;
    while (b > a && (BLANK.test(lines[b - 1]!) || RULE.test(lines[b - 1]!))) b--;
    if (a === b) continue;
    if (out.length) out.push('');
    for (let k = a; k < b; k++) out.push(lines[k]!);
  }
  return out;
}
