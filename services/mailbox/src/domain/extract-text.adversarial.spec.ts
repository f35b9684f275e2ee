/**
 * extracted_text on 1 MB inputs shaped against its rules: one huge line, long runs of
 * blanks, markers that never complete, thousands of attributions, quotes and header-like
 * lines. Each must come back, with the output asserted; how fast is for the benchmark
 * (npm run bench:extract-text), as no test asserts a duration.
 */
import { extractText } from './extract-text';

const MB = 1 << 20;
const lines = (line: string) => `${line}\n`.repeat(Math.ceil(MB / (line.length + 1)));

describe('extracted_text on adversarial 1 MB inputs', () => {
  it('keeps one line of 1 MB, and one of blanks ending in a word', () => {
    expect(extractText({ text: 'a'.repeat(MB) })).toBe('a'.repeat(MB));
    expect(extractText({ text: `${' '.repeat(MB)}x${' '.repeat(MB)}` })).toBe('x');
    expect(extractText({ text: `${'\t '.repeat(MB / 2)}:\n> q` })).toBe(':');
  });

  it('drops 1 MB of quotes: `>`, Supercite and `|`', () => {
    expect(extractText({ text: lines('> quoted text') })).toBe('');
    expect(extractText({ text: `hi\n\n${lines('JD> quoted text')}` })).toBe('hi');
    expect(extractText({ text: `hi\n\n${lines(`|${' '.repeat(1_000)}x`)}` })).toBe('hi');
  });

  it('keeps attribution starts that never end, and header-like lines that are no header block', () => {
    const open = lines('On Mon, Mar 20, 2017 at 10:00 AM, John <');
    expect(extractText({ text: open })).toBe(open.trim());
    const memo = lines('From: x\nTo: y');
    expect(extractText({ text: memo })).toBe(memo.trim());
    const near = lines(`On 10:00 ${'wrote '.repeat(160)}x`);
    expect(extractText({ text: near })).toBe(near.trim());
    const addresses = `${'a@b.c<'.repeat(MB / 6)}:`;
    expect(extractText({ text: addresses })).toBe(addresses);
  });

  it('keeps 4-line attribution starts that never close, sentences in From fields, and long device-like lines with commas', () => {
    const wrapped = lines('On Mon,\nMar 20, 2017 at 10:00 AM, John\n<john@example.com>\nsaid');
    expect(extractText({ text: wrapped })).toBe(wrapped.trim());
    const prose = lines("De : toute façon personne n'était disponible.\nObjet : x");
    expect(extractText({ text: prose })).toBe(prose.trim());
    const device = lines(`Sent from my iPhone, ${'x '.repeat(30)}x\n`);
    expect(extractText({ text: `hi\n\n${device}` })).toBe(`hi\n\n${device.trim()}`);
  });

  it('gives back non-breaking spaces on 1 MB of lines cut short by an attribution run onto their end', () => {
    const block = 'Ok!On Mon, 20 Mar 2017 at 10:00, J <j@x.com> wrote:\n> q';
    const count = Math.ceil(MB / (block.length + 1));
    expect(extractText({ text: `a\u00a0b\n\n${lines(block)}` })).toBe(['a\u00a0b', ...Array.from({ length: count }, () => 'Ok!')].join('\n\n'));
  });

  it('drops thousands of attributions with their quotes, keeping the text between them', () => {
    const block = 'On Mon, Mar 20, 2017 at 10:00 AM, John <j@x.com> wrote:\n> q\nok';
    const count = Math.ceil(MB / (block.length + 1));
    expect(extractText({ text: lines(block) })).toBe(Array.from({ length: count }, () => 'ok').join('\n\n'));
    expect(extractText({ text: lines('20.03.2017, 10:00, "A" <a@b.c>:\n> q') })).toBe('');
  });

  it('takes runs of decoration and device-like lines for what they are', () => {
    expect(extractText({ text: `text\n${'-'.repeat(MB)}` })).toBe('text');
    expect(extractText({ text: `text\n\n${'- '.repeat(MB / 2)}x` })).toBe(`text\n\n${'- '.repeat(MB / 2)}x`);
    const sent = `text\n\n${'Sent from my iPhone '.repeat(MB / 20)}`;
    expect(extractText({ text: sent })).toBe(sent.trim());
  });

  it('keeps device lines that never stand apart, and verb-opened lines that never close; drops name-and-address attributions', () => {
    const devices = `Hi\n${lines('Sent from my iPhone')}Thanks`;
    expect(extractText({ text: devices })).toBe(devices.trim());
    const quoting = lines('Quoting John Smith\n<john@example.com> is here');
    expect(extractText({ text: quoting })).toBe(quoting.trim());
    expect(extractText({ text: lines('John Smith\n<john@example.com> writes:\n') })).toBe('');
  });

  it('converts 1 MB of nested or repeated HTML quotes', () => {
    expect(extractText({ html: `<p>hi</p>${'<blockquote>'.repeat(MB / 12)}x` })).toBe('hi');
    expect(extractText({ html: `<p>hi</p>${'<blockquote>q</blockquote>'.repeat(MB / 28)}` })).toBe('hi');
  });
});
