import { simpleParser } from 'mailparser';
import { decodeFlowed, decodeFlowedParts } from './flowed';

const mail = (...lines: string[]) => Buffer.from(lines.join('\r\n'));

// A reply whose last quoted line is flowed ("> Hi "): libmime's decoder glues "Thanks" onto it.
const reply = ['> Hi ', '> there', 'Thanks, ', 'Ada'];

describe('decodeFlowed', () => {
  it('joins flowed lines of one quote depth only, and honours delsp and the signature line', () => {
    expect(decodeFlowed(reply.join('\r\n'), false)).toBe('> Hi there\nThanks, Ada');
    expect(decodeFlowed('Wor \r\nds', true)).toBe('Words');
    expect(decodeFlowed('Bye \r\n-- \r\nAda', false)).toBe('Bye -- \nAda');
  });
});

describe('decodeFlowedParts', () => {
  it('gives mailparser the decoded text of flowed parts, quoted-printable or base64', async () => {
    const raw = mail(
      'From: ada@example.org',
      'Subject: Re: Hi',
      'Content-Type: multipart/mixed; boundary=b',
      '',
      '--b',
      'Content-Type: text/plain; charset=utf-8; format=flowed; delsp=no',
      'Content-Transfer-Encoding: quoted-printable',
      '',
      ...reply.map((l) => l.replace(/ $/, '=20')),
      '--b',
      'Content-Type: text/plain; format=flowed',
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.from('> Bye \r\nSee you').toString('base64'),
      '--b--',
      '',
    );
    const parsed = await simpleParser(await decodeFlowedParts(raw));
    expect(parsed.text).toBe('> Hi there\nThanks, Ada\n> Bye \nSee you');
    expect(parsed.subject).toBe('Re: Hi');
  });

  it('leaves attachments as they are, and a message without flowed parts untouched', async () => {
    const raw = mail(
      'From: ada@example.org',
      'Content-Type: multipart/mixed; boundary=b',
      '',
      '--b',
      'Content-Type: text/plain; format=flowed',
      '',
      'Hi ',
      'there',
      '--b',
      'Content-Type: text/plain; format=flowed; name=notes.txt',
      'Content-Disposition: attachment; filename=notes.txt',
      '',
      '> Hi ',
      'not to be joined',
      '--b--',
      '',
    );
    const parsed = await simpleParser(await decodeFlowedParts(raw));
    expect(parsed.text).toBe('Hi there');
    const asSent = await simpleParser(raw);
    expect(parsed.attachments.map((a) => [a.filename, a.checksum])).toEqual(asSent.attachments.map((a) => [a.filename, a.checksum]));
    expect(parsed.attachments[0]?.content.toString()).toContain('> Hi \r\nnot to be joined');
    const plain = mail('From: ada@example.org', 'Content-Type: text/plain', '', 'flowed, said nobody ');
    expect(await decodeFlowedParts(plain)).toBe(plain);
  });
});
