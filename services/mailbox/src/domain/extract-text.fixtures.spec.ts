/**
 * extracted_text on our own fixtures (services/mailbox/test/fixtures/extract/<lang>/<client>-<n>.in.txt,
 * or .in.html for a message with only an HTML part, and the expected .out.txt), written from what each mail client puts around a reply: its
 * attribution line, header block, separator and device line, in every language of
 * extract-text.languages.ts. Compared as the corpus spec does: LF endings, trailing
 * whitespace per line removed, the whole trimmed.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { extractText } from './extract-text';
import { LANGUAGES } from './extract-text.languages';

const ROOT = path.resolve(__dirname, '..', '..', 'test', 'fixtures', 'extract');
const N = (s: string) =>
  s
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((l) => l.replace(/\s+$/u, ''))
    .join('\n')
    .trim();

const cases = readdirSync(ROOT).flatMap((lang) =>
  readdirSync(path.join(ROOT, lang))
    .filter((f) => /\.in\.(txt|html)$/.test(f))
    .map((f) => ({ lang, name: `${lang}/${f}`, file: path.join(ROOT, lang, f) })),
);

describe('extracted_text on the fixtures per language and client', () => {
  it('has fixtures for every language of the table', () => {
    for (const lang of Object.keys(LANGUAGES)) expect(cases.filter((c) => c.lang === lang).length).toBeGreaterThanOrEqual(2);
  });

  it.each(cases)('$name', ({ file }) => {
    const expected = readFileSync(file.replace(/\.in\.(txt|html)$/, '.out.txt'), 'utf8');
    const input = readFileSync(file, 'utf8');
    expect(N(extractText(file.endsWith('.html') ? { html: input } : { text: input }))).toBe(N(expected));
  });
});
