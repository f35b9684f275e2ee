/**
 * extracted_html: the HTML part without its quoted history, sanitized. History is what the
 * clients mark as such: Gmail's `gmail_quote`, Apple Mail's and Thunderbird's
 * `<blockquote type="cite">` (with Thunderbird's `moz-cite-prefix` attribution), a blockquote
 * with a quote bar on its left (Mail.ru's, Yahoo for Android's; not an indent), Yahoo's
 * `yahoo_quoted`, Proton's `protonmail_quote`, Zoho's `zmail_extra`, and Outlook's reply
 * header (`divRplyFwdMsg`, `appendonsend`, Outlook 2003's `OutlookMessageHeader`, the
 * `border-top` header div of Outlook desktop, Hotmail's `hr#stopSpelling`, Zimbra's `hr#zwchr`;
 * also with the `x_` prefix Outlook on the web gives classes) or a block whose text is an
 * "Original Message" separator (Samsung's, QQ's),
 * after which everything is history. A forward's block ("---------- Forwarded message
 * ---------") is kept whole, the history it carries too, as extracted_text keeps it. The cut is
 * made on the source by the parser's offsets (no tree is serialized again: nesting depth costs nothing), then
 * sanitize-html keeps a safe subset: no scripts, styles or event handlers, and no attribute
 * that loads anything by itself (images keep only `cid:` and `data:` sources).
 */
import { type ChildNode, Element, Text } from 'domhandler';
import { parseDocument } from 'htmlparser2';
import sanitizeHtml from 'sanitize-html';
import { separatorKind } from './extract-text.markers';

const QUOTE_CLASSES = new Set(['gmail_quote', 'gmail_quote_container', 'yahoo_quoted', 'moz-cite-prefix', 'protonmail_quote', 'zmail_extra']);
const HISTORY_IDS = /(?:^|_)(?:divRplyFwdMsg|appendonsend|stopSpelling|zwchr)$/;
const OUTLOOK_HEADER_DIV = /border-top:\s*solid\s*#(?:e1e1e1|b5c4df)/i;
const QUOTE_BAR = /border-left(?:-style)?\s*:[^;]*\b(?:solid|dashed|dotted|double)\b/i;
const NO_BORDER = /(?:^|;)\s*border\s*:\s*(?:none|0)\b/i;

const SANITIZE: sanitizeHtml.IOptions = {
  allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img', 'font', 'center'],
  allowedAttributes: {
    a: ['href', 'name', 'title', 'rel', 'target'],
    img: ['src', 'alt', 'title', 'width', 'height'],
    td: ['colspan', 'rowspan', 'align', 'valign'],
    th: ['colspan', 'rowspan', 'align', 'valign'],
    '*': ['dir', 'lang'],
  },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: { img: ['cid', 'data'] },
  allowProtocolRelative: false,
  transformTags: { a: sanitizeHtml.simpleTransform('a', { rel: 'noopener noreferrer nofollow', target: '_blank' }) },
  // An image whose remote source was taken off shows nothing: drop it.
  exclusiveFilter: (frame) => frame.tag === 'img' && !frame.attribs.src,
};

function classes(el: Element): string[] {
  // Outlook on the web prefixes the classes of mail it shows or forwards: "x_gmail_quote".
  return (el.attribs.class ?? '').split(/\s+/).map((c) => (c.startsWith('x_') ? c.slice(2) : c));
}

/** Whether the block's text opens with a forward's separator (kept, as extracted_text keeps forwards). */
function isForward(el: Element): boolean {
  // Its first piece of text, found without recursion (quotes nest deep).
  const stack: ChildNode[] = [el];
  while (stack.length) {
    const node = stack.pop()!;
    if (node instanceof Text && node.data.trim()) return separatorKind(node.data.trim()) === 'forward'; // entities decoded by the parser
    if (node instanceof Element) for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!);
  }
  return false;
}

/**
 * A block of quoted history, removed alone: a cited blockquote, or one drawn with a quote bar on
 * its left, its own or one of its first two blocks' (Mail.ru's; Yahoo for Android's); not an indent
 * (Gmail's `border:none`, Outlook on the web's margins, Thunderbird's bare blockquote).
 */
function isQuoteBlock(el: Element): boolean {
  if (classes(el).some((c) => QUOTE_CLASSES.has(c))) return true;
  if (el.name !== 'blockquote') return false;
  const style = el.attribs.style ?? '';
  if (el.attribs.type?.toLowerCase() === 'cite' || QUOTE_BAR.test(style)) return true;
  if (NO_BORDER.test(style)) return false;
  // Yahoo for Android: the attribution's block, then the quote's with the bar.
  const blocks = el.children.filter((c): c is Element => c instanceof Element).slice(0, 2);
  return blocks.some((c) => QUOTE_BAR.test(c.attribs.style ?? ''));
}

/** Where a block's own text is an "Original Message" separator (Samsung's, QQ's): it and everything after it go. */
function isSeparatorText(node: Text): boolean {
  const t = node.data.trim();
  return t.length > 0 && t.length <= 200 && separatorKind(t) === 'original';
}

/** Where Outlook's history starts: this element and everything after it go. */
function startsHistory(el: Element): boolean {
  if (HISTORY_IDS.test(el.attribs.id ?? '') || classes(el).includes('OutlookMessageHeader')) return true;
  return el.name === 'div' && OUTLOOK_HEADER_DIV.test(el.attribs.style ?? '');
}

/** [start, end) ranges of the source that are quoted history. */
function historyRanges(html: string): [number, number][] {
  const doc = parseDocument(html, { withStartIndices: true, withEndIndices: true });
  const ranges: [number, number][] = [];
  let forwardEnd = -1;
  const stack: ChildNode[] = [...doc.children].reverse();
  while (stack.length) {
    const node = stack.pop()!;
    const inForward = (node.startIndex ?? 0) < forwardEnd; // a forward is kept whole, its own history too
    if (node instanceof Text && !inForward && isSeparatorText(node)) {
      // The separator's own block goes when the separator opens it; else the cut is at the text.
      const parent = node.parent instanceof Element && !['body', 'html'].includes(node.parent.name) ? node.parent : null;
      const first = parent?.children.find((c) => !(c instanceof Text && !c.data.trim()));
      ranges.push([(first === node ? parent : node)?.startIndex ?? 0, html.length]);
      break;
    }
    if (!(node instanceof Element)) continue;
    const start = node.startIndex ?? 0;
    if (!inForward && startsHistory(node)) {
      // An <hr> right above Outlook web's reply header is its separator.
      const prev = node.prev instanceof Element ? node.prev : node.prev?.prev instanceof Element ? node.prev.prev : null;
      ranges.push([prev?.name === 'hr' ? (prev.startIndex ?? start) : start, html.length]);
      break;
    }
    if (!inForward && isQuoteBlock(node)) {
      if (!isForward(node)) {
        ranges.push([start, (node.endIndex ?? start) + 1]);
        continue;
      }
      forwardEnd = (node.endIndex ?? start) + 1;
    }
    for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!);
  }
  return ranges;
}

export function extractHtml(html: string): string {
  let kept = '';
  let at = 0;
  for (const [start, end] of historyRanges(html)) {
    if (start < at) continue;
    kept += html.slice(at, start);
    at = end;
  }
  kept += html.slice(at);
  return sanitizeHtml(kept, SANITIZE).trim();
}
