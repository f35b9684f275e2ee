/**
 * extracted_text scored on two public corpora (fixtures/corpora): mailgun/talon and
 * github/email_reply_parser. Comparison: line endings to LF, trailing whitespace per line
 * removed, whole text trimmed; talon's HTML cases compare without any whitespace, as
 * talon's own tests do. github's regex and fragment expectations mean "matches, and no
 * quoted history is left". Score: github 19/19, talon 19/21. The two talon misses are on
 * purpose: talon keeps signatures ("Sent from my iPhone", a `-- ` block) while github's
 * corpus, and we, remove them; with signatures kept those two match exactly (checked).
 */
import { readFileSync } from 'node:fs';
import { simpleParser } from 'mailparser';
import { corpusPath } from '@mailroom/testing';
import { decodeFlowedParts } from '../parsing/flowed';
import { extractText } from './extract-text';

const N = (s: string) =>
  s
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((l) => l.replace(/\s+$/u, ''))
    .join('\n')
    .trim();
const noWhitespace = (s: string) => s.replace(/\s+/gu, '');
const QUOTE_LEFT = /^\s*>|wrote:\s*$/m;

interface Case {
  id: string;
  input: { text: string; html: string };
  ok: (out: string) => boolean;
}

async function talonCases(): Promise<(Case & { expected: string })[]> {
  const expected = JSON.parse(readFileSync(corpusPath('talon', 'EXPECTED.json'), 'utf8')) as Record<string, { expected_text: string }>;
  const cases = [];
  for (const [file, e] of Object.entries(expected)) {
    const raw = readFileSync(corpusPath('talon', file));
    let input: { text: string; html: string };
    if (file.endsWith('.eml')) {
      const m = await simpleParser(await decodeFlowedParts(raw));
      input = { text: m.text ?? '', html: typeof m.html === 'string' ? m.html : '' };
    } else {
      input = { text: '', html: raw.toString('utf8') };
    }
    const ok = file.endsWith('.html') ? (out: string) => noWhitespace(out) === noWhitespace(e.expected_text) : (out: string) => N(out) === N(e.expected_text);
    cases.push({ id: file, input, ok, expected: e.expected_text });
  }
  return cases;
}

function githubCases(): Case[] {
  const expected = JSON.parse(readFileSync(corpusPath('github-email_reply_parser', 'EXPECTED.json'), 'utf8')) as Record<string, Record<string, unknown>>;
  // Entries with only a time limit (pathological.txt) count as passed when they parse: their
  // speed is for the benchmark, tests do not assert durations.
  return Object.entries(expected).map(([file, e]) => {
      const text = readFileSync(corpusPath('github-email_reply_parser', 'emails', file), 'utf8');
      const checks: ((out: string) => boolean)[] = [];
      if (typeof e.expected_visible_text === 'string') checks.push((out) => N(out) === N(e.expected_visible_text as string));
      if (typeof e.first_fragment_exact === 'string') {
        const frag = N(e.first_fragment_exact);
        checks.push(/signature/.test(String(e.note ?? '')) ? (out) => N(out) === frag : (out) => N(out) === frag || N(out).startsWith(`${frag}\n`));
      }
      if (typeof e.first_fragment_regex === 'string') {
        const re = new RegExp(e.first_fragment_regex);
        checks.push((out) => re.test(N(out)));
      }
      if ('second_fragment_regex' in e || 'quoted_fragment_regex' in e || 'hidden' in e || /quote/.test(String(e.note ?? ''))) checks.push((out) => !QUOTE_LEFT.test(N(out)));
      if (e.fragments === 1) checks.push((out) => N(out) === N(text));
      if (['greedy_on.txt', 'email_one_is_not_on.txt', 'email_1_7.txt'].includes(file)) checks.push((out) => !QUOTE_LEFT.test(N(out)) && !/^On (9 Jan|Oct 1)/m.test(N(out)));
      return { id: file, input: { text, html: '' }, ok: (out: string) => checks.every((c) => c(out)) };
  });
}

describe('extracted_text on the corpora', () => {
  it('github/email_reply_parser: 19 of 19', () => {
    const cases = githubCases();
    const failed = cases.filter((c) => !c.ok(extractText(c.input))).map((c) => c.id);
    expect(failed).toEqual([]);
    expect(cases).toHaveLength(19);
  });

  it('talon: 19 of 21, the two others differing only by the signature talon keeps', async () => {
    const cases = await talonCases();
    expect(cases).toHaveLength(21);
    const failed = cases.filter((c) => !c.ok(extractText(c.input)));
    expect(failed.map((c) => c.id)).toEqual(['standard_replies/iphone.eml', 'standard_replies/sparrow.eml']);
    for (const c of failed) expect(c.ok(extractText(c.input, { stripSignature: false }))).toBe(true);
  });

  it('parses the two ReDoS-shaped inputs (their speed is measured, not asserted here)', () => {
    for (const file of ['pathological.txt', 'email_long_quote.txt']) {
      const text = readFileSync(corpusPath('github-email_reply_parser', 'emails', file), 'utf8');
      expect(typeof extractText({ text })).toBe('string');
    }
  });
});
