/**
 * extracted_html: the HTML part of our fixtures' HTML cases (one per client's quoting
 * markup) loses its history and keeps the reply; scripts, event handlers, styles and
 * remote-loading attributes never survive.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { extractHtml } from './extract-html';
import { extractText } from './extract-text';

const ROOT = path.resolve(__dirname, '..', '..', 'test', 'fixtures', 'extract');
const htmlCases = readdirSync(ROOT).flatMap((lang) =>
  readdirSync(path.join(ROOT, lang))
    .filter((f) => f.endsWith('.in.html'))
    .map((f) => ({ name: `${lang}/${f}`, file: path.join(ROOT, lang, f) })),
);
const text = (html: string) => html.replace(/<[^>]*>/g, ' ').replace(/&nbsp;|\s+/g, ' ').trim();

describe('extracted_html', () => {
  it.each(htmlCases)('keeps the reply of $name and none of its quoted history', ({ file }) => {
    const html = readFileSync(file, 'utf8');
    const expected = readFileSync(file.replace(/\.in\.html$/, '.out.txt'), 'utf8');
    const out = text(extractHtml(html));
    // The reply's words are there, in order; what follows them in the source (history) is not,
    // except a forward's content, which extracted_text keeps too. Signatures stay in the HTML, as
    // extracted_text keeps them when asked to; the bound leaves room for an attribution line that
    // sits outside a client's quote block (Fastmail's).
    const withSignature = extractText({ html }, { stripSignature: false });
    expect(out.replace(/\s+/g, ' ')).toContain(expected.split('\n')[0]!.trim());
    expect(out.length).toBeLessThanOrEqual(withSignature.replace(/\s+/g, ' ').length + 60);
  });

  it('removes each client shape exactly', () => {
    expect(extractHtml('<div>Yes.</div><div class="gmail_quote"><div class="gmail_attr">On Mon, A wrote:</div><blockquote class="gmail_quote">Q?</blockquote></div>')).toBe('<div>Yes.</div>');
    expect(extractHtml('<p>Ok</p><div class="moz-cite-prefix">On 20/03/2017, A wrote:</div><blockquote type="cite">Q?</blockquote><p>More</p>')).toBe('<p>Ok</p><p>More</p>');
    expect(extractHtml('<div>Fine</div><div id="yahoo_quoted_1" class="yahoo_quoted">On Monday, A wrote: Q?</div>')).toBe('<div>Fine</div>');
    expect(extractHtml('<div>Sure</div><hr><div id="divRplyFwdMsg"><b>From:</b> A</div><div>Q?</div>')).toBe('<div>Sure</div>');
    expect(extractHtml('<body><div class="WordSection1"><p>Done</p><div><div style="border:none;border-top:solid #E1E1E1 1.0pt"><p><b>From:</b> A</p></div></div><p>Q?</p></div></body>')).toBe(
      '<div><p>Done</p><div></div></div>',
    );
    expect(extractHtml('<div>Here</div><blockquote class="protonmail_quote">Q?</blockquote>')).toBe('<div>Here</div>');
    expect(extractHtml('<p>Yes</p><div class=OutlookMessageHeader dir=ltr><hr tabindex=-1><b>From:</b> A</div><p>Q?</p>')).toBe('<p>Yes</p>');
    expect(extractHtml('<p>Yes</p><hr id="stopSpelling">Date: x<br>From: A<p>Q?</p>')).toBe('<p>Yes</p>');
    // Outlook on the web's "x_" classes on mail it shows again; Zimbra's hr#zwchr.
    expect(extractHtml('<div>Yes.</div><div class="x_gmail_quote"><blockquote class="x_gmail_quote">Q?</blockquote></div>')).toBe('<div>Yes.</div>');
    expect(extractHtml('<div>Ok</div><hr id="zwchr"><b>From: </b>A<br><b>Sent: </b>Monday<p>Q?</p>')).toBe('<div>Ok</div>');
    // A class merely containing a marker's name is not one.
    expect(extractHtml('<div class="not_gmail_quote">Mine</div>')).toBe('<div>Mine</div>');
  });

  it('keeps a forwarded message, as extracted_text does', () => {
    const out = extractHtml('<div>FYI</div><div class="gmail_quote"><div class="gmail_attr">---------- Forwarded message ---------<br>From: A</div><div>Invoice</div></div>');
    expect(out).toContain('Invoice');
  });

  it('sanitizes: no script, style, handler, remote image or javascript: link', () => {
    const out = extractHtml(
      '<style>p{background:url(https://t.example/x)}</style><p onclick="x()" style="background:url(https://t.example/y)">Hi <a href="javascript:alert(1)">a</a> <a href="https://ok.example/">b</a></p>' +
        '<script>alert(1)</script><img src="https://t.example/pixel.gif" width="1"><img src="cid:logo@x" alt="logo"><table background="https://t.example/bg"><tr><td>c</td></tr></table>',
    );
    expect(out).not.toMatch(/script|style|onclick|javascript:|t\.example|background/i);
    expect(out).toContain('<a href="https://ok.example/" rel="noopener noreferrer nofollow" target="_blank">b</a>');
    expect(out).toContain('<img src="cid:logo@x" alt="logo" />');
    expect(out.match(/<img/g)).toHaveLength(1);
  });

  it('is bounded on 1 MB of nested or repeated quotes', () => {
    expect(extractHtml(`<p>hi</p>${'<blockquote type="cite">'.repeat((1 << 20) / 24)}x`)).toBe('<p>hi</p>');
    const repeated = extractHtml(`<p>hi</p>${'<div><blockquote type="cite">q</blockquote></div>'.repeat((1 << 20) / 48)}`);
    expect(repeated.startsWith('<p>hi</p><div></div>')).toBe(true);
    expect(repeated).not.toContain('q');
  });
});
