import { MAX_REPORT_BYTES, parseFeedback } from './index';

/** A message from header and body lines, CRLF-terminated as on the wire. */
const mail = (...lines: string[]) => Buffer.from(lines.join('\r\n'));

describe('parseFeedback: not a report', () => {
  it('returns other for ordinary mail and for an auto-reply', async () => {
    const ordinary = mail('From: ivan@example.org', 'To: agent@customer.example', 'Subject: Re: Hello', 'Message-ID: <x@example.org>', '', 'Thanks, got it. The delivery was fine.');
    expect(await parseFeedback(ordinary)).toEqual({ kind: 'other' });
    const vacation = mail('Return-Path: <>', 'From: judy@example.org', 'To: agent@customer.example', 'Auto-Submitted: auto-replied', 'Subject: Out of office', '', 'I am away until Monday.');
    expect(await parseFeedback(vacation)).toEqual({ kind: 'other' });
  });

  it('returns other for empty, binary and oversized input', async () => {
    expect(await parseFeedback(Buffer.alloc(0))).toEqual({ kind: 'other' });
    expect(await parseFeedback(Buffer.from([0, 255, 1, 2, 3, 0, 13, 10]))).toEqual({ kind: 'other' });
    const report = mail('From: MAILER-DAEMON@mx.example.net', 'Subject: failure notice', '', '<frank@example.org>:', '550 5.1.1 User unknown', '');
    expect(await parseFeedback(report)).toMatchObject({ kind: 'dsn' });
    const big = Buffer.concat([report, Buffer.alloc(MAX_REPORT_BYTES, 0x61)]);
    expect(await parseFeedback(big)).toEqual({ kind: 'other' });
  });

  it('stays bounded on hostile input just under the size limit', async () => {
    const head = 'From: MAILER-DAEMON@x.example\r\nSubject: Undelivered Mail\r\nContent-Type: text/html\r\n\r\n';
    // '<div>' nested: the HTML parser's work grows with the square of the depth.
    for (const body of ['<'.repeat(4_000_000), '<div>'.repeat(900_000), 'a@'.repeat(2_000_000), `${'|'.repeat(1999)}\n`.repeat(2000), 'Final-Recipient: rfc822; a@b.example\nAction: failed\n'.repeat(60_000)]) {
      const f = await parseFeedback(Buffer.from(head + body));
      expect(['dsn', 'other']).toContain(f.kind);
      if (f.kind === 'dsn') expect(f.recipients.length).toBeLessThanOrEqual(500);
    }
  });
});
