import { readFileSync } from 'node:fs';
import { corpusPath } from '@mailroom/testing';
import { DataScanner } from './data-scanner';

function scan(parts: string[], max = 1_000): DataScanner {
  const s = new DataScanner(max);
  for (const p of parts) s.push(Buffer.from(p, 'latin1'));
  return s;
}

describe('DataScanner', () => {
  it('accepts CRLF-only content, split anywhere', () => {
    const text = 'Subject: x\r\n\r\nline one\r\nline two\r\n';
    for (let cut = 0; cut <= text.length; cut++) {
      const s = scan([text.slice(0, cut), text.slice(cut)]);
      expect(s.bareLineEnding).toBe(false);
      expect(s.message().toString('latin1')).toBe(text);
    }
  });

  it.each([
    ['bare LF', 'a\nb\r\n'],
    ['bare CR', 'a\rb\r\n'],
    ['CR CR LF', 'a\r\r\nb\r\n'],
    ['trailing CR', 'a\r\nb\r'],
    ['LF first', '\nb\r\n'],
  ])('finds a %s, wherever the chunk boundary falls', (_name, text) => {
    for (let cut = 0; cut <= text.length; cut++) expect(scan([text.slice(0, cut), text.slice(cut)]).bareLineEnding).toBe(true);
  });

  it('flags every end-of-data variant of the smuggling corpus that has a bare CR or LF', () => {
    const corpus = JSON.parse(readFileSync(corpusPath('smtp-smuggling', 'eod-sequences.json'), 'utf8')) as {
      hannob_smtpsmug: Record<string, string>;
      the_login_inbound: string[];
      the_login_outbound_extra: string[];
    };
    const all = [...Object.values(corpus.hannob_smtpsmug), ...corpus.the_login_inbound, ...corpus.the_login_outbound_extra];
    for (const eod of all) {
      const flagged = scan([`hello${eod}MAIL FROM:<x@y>\r\n`]).bareLineEnding;
      expect(flagged).toBe(eod !== '\r\n\u0000.\r\n');
    }
  });

  it('stops keeping data once over the limit', () => {
    const s = new DataScanner(10);
    expect(s.push(Buffer.from('12345'))).toBe(true);
    expect(s.push(Buffer.from('678901'))).toBe(false);
    expect(s.exceeded).toBe(true);
    expect(s.message().length).toBe(0);
  });
});
