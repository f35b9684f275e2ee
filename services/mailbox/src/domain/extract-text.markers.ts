/**
 * The table of extract-text.languages.ts compiled into line tests: header-block fields,
 * "original message" separators, attributions and device signatures. Every test looks at
 * one line (or 1-4 joined lines) of bounded length; the regexes are alternations of
 * literals or single character classes, so none can backtrack over its input.
 */
import { DEVICE_BRANDS, DEVICE_WORDS, LANGUAGES, REPLY_SUBJECTS } from './extract-text.languages';

export type FieldKind = 'from' | 'date' | 'to' | 'cc' | 'subject';

/** Lines longer than this are text, never a marker. */
export const MAX_MARKER_LINE = 1_000;
const MAX_ATTRIBUTION = 600;
const MAX_DEVICE_LINE = 100;

// Turkish "İ" lowercases to "i" and a combining dot (U+0307): drop the dot ("Özgün İleti" is "özgün ileti").
const norm = (s: string) => s.toLowerCase().replace(/\u0307/g, '').replace(/[’`´]/g, "'").replace(/\s+/g, ' ').trim();
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const CJK = /[\p{Script=Han}\p{Script=Hangul}\p{Script=Hiragana}\p{Script=Katakana}]/u;
const byLength = (a: string, b: string) => b.length - a.length;
const all = <K extends 'attributionOpeners' | 'attributionVerbs' | 'separators' | 'forwards' | 'forwardSubjects' | 'devicePrefixes' | 'deviceSuffixes'>(key: K) =>
  [...new Set(Object.values(LANGUAGES).flatMap((l) => l[key].map(norm)))].sort(byLength);

const FIELDS = new Map<string, FieldKind>();
for (const lang of Object.values(LANGUAGES)) {
  for (const [kind, names] of Object.entries(lang.fields) as [FieldKind, string[]][]) {
    for (const name of names) if (!FIELDS.has(norm(name))) FIELDS.set(norm(name), kind);
  }
}
const MAX_FIELD_NAME = Math.max(...[...FIELDS.keys()].map((k) => k.length)) + 8; // room for `*` and spaces
const SEPARATORS = new Set(all('separators'));
const REPLY_ABOVE = new RegExp(
  [...new Set(Object.values(LANGUAGES).flatMap((l) => (l.replyAbove ?? []).map(norm)))].sort(byLength).map(escape).join('|'),
  'iu',
);
const FORWARDS = new Set(all('forwards'));
const FORWARD_SUBJECT = new RegExp(`^(?:${all('forwardSubjects').map(escape).join('|')})\\s*[:：]`, 'iu');
const DEVICE_PREFIXES = all('devicePrefixes');
const DEVICE_SUFFIXES = all('deviceSuffixes');
const DEVICE_PREFIX_PAIRS = DEVICE_PREFIXES.map((p) => p.split('…') as [string, string | undefined]);
const DEVICE_HEADS = new Map<string, string[]>();
for (const p of DEVICE_PREFIXES) DEVICE_HEADS.set(p[0]!, [...new Set([...(DEVICE_HEADS.get(p[0]!) ?? []), p.slice(0, 4)])]);
const DEVICE_SUFFIX_LAST = new Set(DEVICE_SUFFIXES.map((p) => p[p.length - 1]!));

const verbs = all('attributionVerbs');
const alt = (list: string[]) => list.map(escape).join('|');
// Words of alphabetic scripts must stand alone ("wrote", not "overwrote"); CJK verbs cannot.
const VERB_WORD = new RegExp(`(?<![\\p{L}\\p{M}])(?:${alt(verbs.filter((v) => !CJK.test(v)))})(?![\\p{L}\\p{M}])`, 'iu');
const VERB_CJK = new RegExp(`(?:${alt(verbs.filter((v) => CJK.test(v)))})`, 'u');
const VERB_FIRST = new RegExp(`^(?:${alt(verbs)})(?![\\p{L}\\p{M}])`, 'iu');
const VERB_AT_END = new RegExp(`(?:${alt(verbs)})$`, 'iu');
const COLON_VERB_AT_END = new RegExp(`(?<![\\p{L}\\p{M}])(?:${alt(Object.values(LANGUAGES).flatMap((l) => (l.colonVerbs ?? []).map(norm)))})$`, 'iu');
const OPENER = new RegExp(`^(?:${alt(all('attributionOpeners'))})(?![\\p{L}\\p{M}])`, 'iu');
const OPENER_INSIDE = new RegExp(`(?<![\\p{L}\\p{M}])(?:${alt(all('attributionOpeners'))})(?![\\p{L}\\p{M}])`, 'giu');

const LETTER_AT_END = /[\p{L}\p{M})]$/u;
/** Where an attribution may run on inside a line: glued to the text before it, or after the end of a sentence. */
const RUN_ON = /(?:\S|[.!?)\]"'»”。！？]\s+)$/u;
const ADDRESS = /[^\s<>@]@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+/u;
const ENDS_WITH_ADDRESS = /(?:>|\]|@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+\)?)$/u;
const TIME = /(?<!\d)\d{1,2}[:.]\d{2}(?!\d)/;
const DATE = /(?<!\d)(?:19|20)\d{2}(?!\d)|(?<!\d)\d{1,2}[./-]\d{1,2}[./-]\d{2,4}(?!\d)/;
const DECORATION = new Set([...' \t-_=*~#']);
const EASTERN_DIGIT = /[\u0660-\u0669\u06f0-\u06f9]/g;
/** Arabic-Indic digits as ASCII ones, so DATE and TIME read Gmail's Arabic "٢٠ مارس ٢٠١٧ ١٠:٠٠". */
const asciiDigits = (s: string) => (/[\u0660-\u06f9]/.test(s) ? s.replace(EASTERN_DIGIT, (d) => String((d.charCodeAt(0) - 0x0660) % 0x90)) : s);
/** The line without leading and trailing runs of `-_=*~#` and blanks (a loop: no regex backtracks over the runs). */
function undecorated(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && DECORATION.has(s[a]!)) a++;
  while (b > a && DECORATION.has(s[b - 1]!)) b--;
  return s.slice(a, b);
}
/** A line ruled at both ends ("-----<name> wrote: -----", "##- ... -##"). */
const ruled = (s: string) => /^\s*[-_=*~#]{2,}/.test(s) && /[-_=*~#]{2,}\s*$/.test(s);
const LINK = /<(?:https?|mailto):[^>\s]{0,2000}>|\[(?:https?|mailto):[^\]\s]{0,2000}\]|\((?:https?|mailto):[^)\s]{0,2000}\)|\s(?:https?):\/\/\S{0,2000}$/g;

/** The field of a header-block line ("From: a", "*De :* b", "发件人：c"), or null. */
export function headerField(line: string): { kind: FieldKind; value: string } | null {
  if (line.length > MAX_MARKER_LINE) return null;
  const head = line.slice(0, 40);
  const colon = head.search(/[:：]/);
  if (colon < 1 || colon > MAX_FIELD_NAME) return null;
  const kind = FIELDS.get(norm(head.slice(0, colon).replace(/\*/g, '')));
  return kind ? { kind, value: line.slice(colon + 1).replace(/^[\s*]+/, '') } : null;
}

/**
 * "-----Original Message-----" and its translations ('original'), or "---------- Forwarded
 * message ---------", "Begin forwarded message:" and theirs ('forward'), or null.
 */
export function separatorKind(line: string): 'original' | 'forward' | null {
  if (line.length > 200) return null;
  const decorated = /^\s*[-_=*~#]{2,}/.test(line);
  if (!decorated && !/[:：]\s*$/.test(line)) return null;
  let core = undecorated(line);
  if (/[:：]$/.test(core)) core = core.slice(0, -1);
  const name = norm(core);
  // Undecorated, one word is a label ("Original:" above a text and its "Translation:"), not a
  // separator; "Original" alone is one only inside a long rule (Foxmail's "------------------
  // Original ------------------"), as "--- Original ---" and "## Original" in Markdown are labels.
  const longRule = () => /^\s*[-=_]{6,}/.test(line) && /[-=_]{6,}\s*$/.test(line);
  if (SEPARATORS.has(name) && (decorated || name.includes(' ')) && (name !== 'original' || longRule())) return 'original';
  if (FORWARDS.has(name)) return 'forward';
  // Horde names the sender inside its rule: "----- Forwarded message from John <j@x> -----".
  if (decorated && /[-_=*~#]{2}$/.test(line.trimEnd())) {
    for (const f of FORWARDS) if (name.length > f.length && name.startsWith(f) && name[f.length] === ' ') return 'forward';
  }
  return null;
}

/**
 * GroupWise's reply header, ">>> John Smith <john@example.com> 3/20/2017 10:00 AM >>>", above
 * unquoted history: a marker, not a quoted line.
 */
export function isGroupWiseHeader(line: string): boolean {
  const s = line.trim();
  return s.length <= 300 && s.startsWith('>>> ') && s.endsWith(' >>>') && DATE.test(s) && (TIME.test(s) || ADDRESS.test(s));
}

/**
 * A field's name as the last cell of a line, right-aligned as in Lotus Notes' tabular reply
 * header ("                                                  To", "   John Smith          cc"):
 * the name alone after at least 20 columns (`alone`), or after a gap of 8 spaces or more, or null.
 */
export function fieldLabel(line: string): { kind: FieldKind; alone: boolean } | null {
  if (line.length > 300) return null;
  const s = line.replace(/\t/g, '        ').trimEnd();
  const gap = s.lastIndexOf('        ');
  if (gap < 0) return null;
  const cell = s.slice(gap + 8).trimStart();
  if (!cell || cell.length > MAX_FIELD_NAME || /\s{2}/.test(cell)) return null;
  const alone = !s.slice(0, gap).trim();
  if (alone && s.length - cell.length < 20) return null;
  const kind = FIELDS.get(norm(cell));
  return kind ? { kind, alone } : null;
}

/**
 * A help desk's or an app's "##- Please type your reply above this line -##", "-- Reply above
 * this line --", "Please reply above this line.": decorated at both ends (at most 14 words), or
 * opening or ending with the phrase, with at most 4 more words and no `,;:?` ("Sorry, I missed the
 * note asking me to reply above this line.", "Where do I reply above this line?", "- Reply above
 * this line is confusing for customers" are text).
 */
export function isReplyAbove(line: string): boolean {
  if (line.length > 200 || !REPLY_ABOVE.test(line)) return false;
  const t = line.trim();
  const s = norm(undecorated(t).replace(/[.!]+$/, ''));
  const m = REPLY_ABOVE.exec(s);
  if (!m) return false;
  const words = s.split(' ').length;
  if (ruled(t)) return words <= 14;
  if (t.startsWith('[') && t.endsWith(']')) return words <= 14;
  const edge = m.index === 0 || m.index + m[0].length === s.length;
  return edge && !/^[-_=*~#(]/.test(t) && !/[,;:?，；：？]/.test(t) && words <= m[0].split(' ').length + 4;
}

const REPLY_SUBJECT = new RegExp(`^(?:${REPLY_SUBJECTS.map(escape).join('|')})(?:\\[\\d{1,3}\\])?\\s*[:：]`, 'iu');
const SUBJECT_PREFIX = new RegExp(`^(?:${[...REPLY_SUBJECTS, ...all('forwardSubjects')].map(escape).join('|')})(?:\\[\\d{1,3}\\])?\\s*[:：]\\s*`, 'iu');
const SUBJECT_TAG = /^\[[^\]]{0,60}\]\s*/;

/** A subject without its list tags ("[list] ", "[EXTERNAL] "). */
const untagged = (subject: string) => {
  let s = norm(subject);
  for (let k = 0; k < 5 && SUBJECT_TAG.test(s); k++) s = s.replace(SUBJECT_TAG, '');
  return s;
};

/** What a message's own subject says it is: "FW: x" a forward, "RE: x" (and "RE: FW: x", "[list] Re[2]: x") a reply, else unknown. */
export function subjectKind(subject: string | null | undefined): 'forward' | 'reply' | undefined {
  const s = untagged(subject ?? '');
  if (FORWARD_SUBJECT.test(s)) return 'forward';
  return REPLY_SUBJECT.test(s) ? 'reply' : undefined;
}

/** A subject without its tags and its reply and forward prefixes ("RE: FW: [x] Budget" is "budget"), lowercased. */
export function subjectCore(subject: string): string {
  let s = untagged(subject);
  for (let k = 0; k < 10; k++) {
    const t = s.replace(SUBJECT_PREFIX, '').replace(SUBJECT_TAG, '');
    if (t === s) break;
    s = t;
  }
  return s;
}

/** A subject that says its message is a forward ("FW: x", "WG: x", "TR: x"). */
export function isForwardSubject(subject: string): boolean {
  return FORWARD_SUBJECT.test(norm(subject)); // norm: Turkish "İLT:" is "ilt:"
}

/** Whether a line starts as an attribution does ("On", "Le", "Am", "W dniu", ...). */
export function startsWithOpener(line: string): boolean {
  return OPENER.test(undecorated(line));
}

/** Whether the start of a line may open a wrapped attribution (its other lines come after). */
export function mayOpenAttribution(line: string): boolean {
  const s = asciiDigits(undecorated(line));
  // ... or is ruled at both ends, as Lotus Notes' "-----Paul Ramirez/Ops/Acme wrote: -----" is.
  return OPENER.test(s) || DATE.test(s) || TIME.test(s) || s.includes('<') || s.includes('@') || ruled(line);
}

/** Whether a line has an attribution's verb ("Quoting", "napisana przez", "写道"): it may open one wrapped before its `<address>`. */
export function hasAttributionVerb(line: string): boolean {
  return line.length <= MAX_ATTRIBUTION && (VERB_WORD.test(line) || VERB_CJK.test(line));
}

/**
 * An attribution, on one line or on 2-3 joined ones: "On <date>, <name> wrote:" and its
 * translations (the verb anywhere: "Am ... schrieb <name>:", "<name> kirjoitti <date>:"),
 * "<name> <addr> wrote:", Zoho's "---- On ... wrote ----", and Gmail's verbless
 * "<date> <name> <addr>:" (old English Gmail, Russian, Japanese, Hebrew). A verb needs an
 * address, a time, or an opening "On"-word and a date beside it; a verbless one a date (a
 * year or d/m/y: a time alone is not enough) and an address.
 */
export function isAttribution(text: string): boolean {
  if (text.length > MAX_ATTRIBUTION) return false;
  const decorated = /^\s*[-_=*~#]{2,}/.test(text) && /[-_=*~#]{2}$/.test(text.trimEnd());
  let s = asciiDigits(undecorated(text));
  const colon = /[:：]$/.test(s);
  if (colon) s = s.slice(0, -1).trimEnd();
  if (!s) return false;
  // "On Monday I wrote:" is prose: an opening word counts only with a date ("On 20/03/2017, John wrote:").
  const nearby = () => ADDRESS.test(s) || TIME.test(s) || (OPENER.test(s) && DATE.test(s));
  if (!colon && !decorated) {
    // Without a colon it must end with its verb ("... John Smith <j@x> wrote"). Not with an
    // address after the verb: "On 20/03/2017 I wrote to support@example.com<mailto:...>" is prose.
    const tail = s.slice(-40);
    return LETTER_AT_END.test(tail) && VERB_AT_END.test(tail) && (VERB_WORD.test(tail) || VERB_CJK.test(tail)) && nearby();
  }
  // Lotus Notes' "-----Paul Ramirez/Ops/Acme wrote: -----": ruled at both ends, its verb last before the colon.
  if (decorated && colon && VERB_AT_END.test(s)) return true;
  if (VERB_WORD.test(s) || VERB_CJK.test(s)) return nearby();
  if (colon && COLON_VERB_AT_END.test(s) && ADDRESS.test(s)) return true;
  // Verbless, it needs a date, not a time alone: "the meeting: 10:00 with John <j@x>:" is text.
  return colon && ENDS_WITH_ADDRESS.test(s) && (ADDRESS.test(s) || s.includes('<')) && DATE.test(s);
}

/**
 * Where an attribution starts inside a line that ends with it ("Thanks!On Mon, ... wrote:",
 * a reply and the quote's attribution run together by an HTML converter), or -1. At most
 * the first 5 "On"-words of the line are tried.
 */
export function attributionInside(line: string): number {
  if (line.length > MAX_MARKER_LINE) return -1;
  OPENER_INSIDE.lastIndex = 0;
  for (let k = 0; k < 5; k++) {
    const m = OPENER_INSIDE.exec(line);
    if (!m) return -1;
    const head = line.slice(0, m.index);
    // "On Mon, Mar 20, 2017 at 10:00 AM, John <j@x> wrote:" is one attribution, not "... AM" + "AM, John ... wrote:";
    // and it follows the end of a sentence or sits glued to it: "w piśmie z dnia 5 marca 2024 r. napisał:" is prose.
    if (m.index > 0 && head.trim() && RUN_ON.test(head) && !mayOpenAttribution(head) && isAttribution(line.slice(m.index))) return m.index;
  }
  return -1;
}

/** "<name> writes:", "Bob a écrit :": a verb and a colon, without the address or time an attribution needs elsewhere. */
export function isBareAttribution(line: string): boolean {
  const s = line.trim();
  return s.length <= 200 && /[:：]$/.test(s) && (VERB_WORD.test(s) || VERB_CJK.test(s));
}

/**
 * alot's colonless "Quoting John Smith (2017-03-21 08:47:12)": opened by an attribution's verb,
 * ending with a date and a time in parentheses ("Quoting the 10:30 standup notes" is text). Taken
 * only right above quoted text (quotes.ts), like isDatedSender.
 */
export function isVerbLedAttribution(line: string): boolean {
  const s = line.trim();
  if (s.length > 200 || !s.endsWith(')') || !VERB_FIRST.test(s)) return false;
  const when = s.slice(s.lastIndexOf('(') + 1, -1); // "(2017-03-21 08:47:12)": a date and a time, nothing else
  return DATE.test(when) && TIME.test(when) && !/\p{L}{3}/u.test(when.replace(/[ap]\.?m\.?|utc|gmt/gi, ''));
}

/** An attribution with neither an address nor a time ("On 14 February 2017 the Supplier wrote:"): history only above a quote. */
export function isUndatedAttribution(text: string): boolean {
  const s = asciiDigits(text);
  if (ruled(s)) return false; // ruled: Lotus Notes' "-----<name> wrote: -----"
  return !ADDRESS.test(s) && !TIME.test(s) && !/(?<!\d)\d{1,2}h\d{2}(?!\d)/.test(s) && !s.includes('<');
}

/**
 * Old Gmail's colonless "2011/7/15 John Smith <john@example.com>" (and its localisations): a
 * date, then a sender ending with its address, nothing else. Taken only right above quoted
 * text (quotes.ts): alone it could be a line of a list.
 */
export function isDatedSender(line: string): boolean {
  const s = line.trim();
  return s.length <= 200 && s.endsWith('>') && ADDRESS.test(s) && DATE.test(s.slice(0, 12));
}

/** Whether a line's last word names a device or an app ("Sent from my iPhone", "... Yahoo Mail for iPhone<link>"). */
export function endsWithDevice(line: string): boolean {
  const words = norm(line.replace(LINK, '')).replace(/[.!。！]+$/, '').split(' ');
  const last = words[words.length - 1] ?? '';
  return DEVICE_WORDS.some((w) => last.includes(w));
}

/**
 * A device or app signature on its own line: "Sent from my iPhone", "Envoyé de mon iPad",
 * "Von meinem iPhone gesendet", "iPhoneから送信", "Get Outlook for iOS<https://aka.ms/...>".
 * At most 16 words after a link is taken off, with no sentence punctuation (", ; ! ? :"):
 * "Sent from my desk, is much easier" is text.
 */
export function isDeviceLine(line: string): boolean {
  if (line.length > MAX_DEVICE_LINE + 2_100 || (line.length > MAX_DEVICE_LINE && !line.includes('http'))) return false;
  // Most lines are ruled out by how they start and end, before any normalising.
  const head = line.trimStart().slice(0, 4).toLowerCase();
  let end = line.trimEnd();
  if (end.endsWith('>') && end.lastIndexOf('<') > 0) end = end.slice(0, end.lastIndexOf('<')).trimEnd(); // "... を入手<https://...>"
  const last = end.replace(/[.。]$/, '').slice(-1).toLowerCase();
  if (!DEVICE_HEADS.get(head.charAt(0))?.some((h) => head.startsWith(h)) && !DEVICE_SUFFIX_LAST.has(last)) return false;
  const s = norm(line.replace(LINK, ''));
  if (!s || s.length > MAX_DEVICE_LINE) return false;
  const bare = s.replace(/[.。!！]+$/, '');
  if (bare.split(' ').length > 16) return false;
  for (const [prefix, tail] of DEVICE_PREFIX_PAIRS) {
    // "von meinem…gesendet": the line must also end with the part after "…" ("Von meinem iPhone gesendet").
    if (bare.length > prefix.length && bare.startsWith(prefix)) {
      if (tail !== undefined && !(bare.endsWith(tail) && bare.length > prefix.length + tail.length)) continue;
      // "Sent from my iPhone, please excuse typos" names a device before its comma; "Sent from my desk, is much easier" does not.
      const rest = tail === undefined ? bare.slice(prefix.length) : bare.slice(prefix.length, bare.length - tail.length);
      const stop = rest.search(/[,;!?:，；：]/);
      const names = (t: string) => DEVICE_WORDS.some((w) => t.includes(w));
      // Before a comma the device comes last, or nearly ("Sent from my iPhone, please excuse typos",
      // "Sent from my Samsung Galaxy S8, an AT&T 4G LTE smartphone"): "Sent from my phone earlier
      // but it bounced, so trying again" is a sentence.
      const nearStop = (t: string) => names(t.split(' ').slice(-3).join(' '));
      // An entry that names its device is a client's line: only a platform's or device's name may
      // stand between its halves, as words of their own ("Outlook für iOS herunterladen"; "Samsung
      // Galaxy akıllı telefonumdan gönderildi.", not "... telefonumdan fotoğraflar dün gönderildi.").
      if (tail !== undefined && names(prefix) && /^\s/.test(rest) && rest.trim().includes(' ') && !names(rest)) return false;
      // ... or a brand after a comma, in a short line with no other punctuation ("Sent from my
      // Verizon, Samsung Galaxy smartphone"; not "Sent by courier, tracking in the DHL app").
      const named = (stop < 0 ? names(rest) : nearStop(rest.slice(0, stop).trim())) || (!/[;!?:；：.]/.test(rest) && rest.trim().split(' ').length <= 8 && DEVICE_BRANDS.some((w) => rest.slice(stop).includes(w)));
      // Naming no known device, it must be short ("Sent from my Nokia 3310"): "Von meinem Büro
      // aus kann ich das leider nicht prüfen." is a sentence.
      return named || (stop < 0 && rest.trim().split(' ').length <= 5);
    }
  }
  // Verb-last: a short line naming a device; a full stop only after CJK ("...에서 보냈습니다."), as
  // "Ich habe es per Mail gesendet." and "Outlook hat die Mail nicht gesendet." are sentences.
  const suffixed = CJK.test(s) ? bare : s;
  if (/[,;!?:，；：]/.test(suffixed) || suffixed.split(' ').length > 6) return false;
  return DEVICE_SUFFIXES.some((suffix) => suffixed.endsWith(suffix)) && DEVICE_WORDS.some((w) => suffixed.includes(w));
}
