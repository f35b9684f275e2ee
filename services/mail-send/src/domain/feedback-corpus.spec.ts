/**
 * parseFeedback scored on sisimai's set-of-emails (fixtures/corpora/sisimai: rb-sisimai@9c4a184,
 * BSD-2; EXPECTED.tsv transcribed from its test/public/*.rb). Score: 576 of 590 files.
 *
 * What is counted. EXPECTED.tsv has 625 rows for 588 files of bsd/, one row per recipient
 * (file, DSN status, reply code, reason, hardbounce, feedback type); not/ holds 2 messages
 * that are no reports (the corpus README says 3; there are 2). bsd/lhost-aol-06.eml has no
 * row and is not scored. So 590 files are scored, each as one unit:
 * - reason `feedback` (25 files): kind 'complaint' with feedbackType equal to the feedback
 *   type column; a file with several rows (arf-16: 7, arf-17: 2) must name as many
 *   recipients. A one-row file needs none: sisimai writes a row even when the report names
 *   no recipient (arf-11, arf-15 address "undisclosed").
 * - reason `vacation` (rfc3834, 5 files) and not/ (2 files): kind 'other'. Auto-replies are not
 *   delivery reports, and the result type has no vacation kind.
 * - every other file is a bounce or a delivery report: kind 'dsn', and the multiset of our
 *   recipients' bounceType equals that of its rows, so the recipient count must match too.
 *   A row's class is the first digit of its DSN status (of the reply code when the status is
 *   empty): 5 -> Permanent, 4 -> Transient, 2 -> null (delivered, 4 rows). This is our meaning
 *   of hard and soft (the code's class, as SES has it), not sisimai's `hardbounce` column,
 *   which is true only for the reasons userunknown, hostunknown, hasmoved and notaccept: its
 *   hardbounce=false rows with 5.x.x (blocked, filtered, mailboxfull, ...) are Permanent here,
 *   and its one hardbounce=true row with a 4.x.x code (lhost-postfix-05, 4.1.1) is Transient.
 *   The column is used below only for the NoEmail check, which is reported, not scored.
 * Rows whose status is a sisimai pseudo code (x.0.9xx, no reply code) carry sisimai's own
 * guess of the class; they are scored like the rest, and the misses they cause are listed.
 *
 * Which rule reads which family (files): message/feedback-report -> ARF (arf 13); JMRP's
 * X-HmXmrOriginalRecipient and X-Apple-Unsubscribe -> vendor complaints (arf 4); SES JSON ->
 * lhost-amazonses 5; a message/delivery-status part -> the RFC 3464 reader (302: Postfix,
 * Sendmail, gsuite, Office365, Exchange 2007, AOL, receivingses, rhost-*, ...); DSN fields in a
 * text part, or a multipart whose boundary was lost -> the same reader (18: amazonworkmail,
 * rfc3464, postfix, sendmail); plain-text notices -> X-Failed-Recipients (69: Exim, Gmail,
 * mailru, googlegroups), lines that start with an address (115: qmail, Yahoo, Exchange 2003,
 * v5sendmail, mfilter, x1-x4, notes, ...), other addresses in the notice (56: DragonFly
 * "delivering your mail to <addr>", imailserver, kddi, interscanmss, ...). In all of them the
 * block's enhanced status decides the class, else its reply code, else the wording (a delay
 * warning or temporary wording -> Transient, any other returned message -> Permanent).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { corpusPath } from '@mailroom/testing';
import { parseFeedback, type Feedback } from './feedback';

interface Row {
  status: string;
  reply: string;
  reason: string;
  hardbounce: boolean;
  extra: string;
}

/** Files scored against the corpus's expectation, with the one-line reason for each. */
const KNOWN_MISSES: Record<string, string> = {
  'bsd/lhost-gmail-08.eml': 'delay warning ("WARNING MESSAGE ONLY", will be retried): Transient here, sisimai 5.0.947',
  'bsd/lhost-opensmtpd-04.eml': '"only a temporary failure report": Transient here, sisimai 5.0.944',
  'bsd/lhost-opensmtpd-06.eml': 'Action: delayed, Status 4.4.7: Transient here, sisimai 5.0.947',
  'bsd/lhost-opensmtpd-12.eml': 'Action: delayed, Status 4.0.0: Transient here, sisimai 5.0.932',
  'bsd/lhost-opensmtpd-15.eml': 'Action: delayed, Status 4.4.7: Transient here, sisimai 5.0.947',
  'bsd/lhost-opensmtpd-16.eml': 'Action: delayed, Status 4.4.7: Transient here, sisimai 5.0.947',
  'bsd/lhost-exim-06.eml': 'no code, "This is a permanent error ... retry timeout exceeded": Permanent here, sisimai 4.0.947 (same text is 5.0.947 in gmx-04, mailru-10)',
  'bsd/lhost-exim-07.eml': 'no code, "permanent error ... mailbox is full: retry timeout exceeded": Permanent here, sisimai 4.0.922',
  'bsd/lhost-exim-08.eml': 'no code, "all hosts have been failing for a long time", returned: Permanent here, sisimai 4.0.947',
  'bsd/lhost-sendmail-56.eml': 'the reason line says 554 (Permanent); sisimai takes 421 4.7.0 from the session transcript',
  'bsd/rhost-franceptt-10.eml': 'Status 4.5.0 with Diagnostic-Code 550 5.5.0: the reporting MTA\'s class is kept (as the corpus does for 7 other such files); sisimai 5.5.0 here',
  'bsd/lhost-fml-02.eml': 'mailing-list manager notice "You are not a member of this list": no failure wording or code, read as other',
  'bsd/lhost-fml-03.eml': 'mailing-list manager "Loop Alert: Duplicated Message-ID": no failure wording or code, read as other',
  'bsd/rfc3464-28.eml': 'the file holds two reports (mbox); one message is read, so one of the two delivered rows',
};

function expectedRows(): Map<string, Row[]> {
  const byFile = new Map<string, Row[]>();
  const lines = readFileSync(corpusPath('sisimai', 'EXPECTED.tsv'), 'utf8').trim().split('\n').slice(1);
  for (const line of lines) {
    const [file = '', status = '', reply = '', reason = '', hardbounce = '', extra = ''] = line.split('\t');
    byFile.set(`bsd/${file}`, [...(byFile.get(`bsd/${file}`) ?? []), { status, reply, reason, hardbounce: hardbounce === 'true', extra }]);
  }
  return byFile;
}

function rowClass(row: Row): string {
  const digit = (row.status || row.reply)[0];
  return digit === '5' ? 'Permanent' : digit === '4' ? 'Transient' : digit === '2' ? 'null' : `unexpected ${row.status}`;
}

/** Classified as the corpus says (see the top comment). `rows` null: a not/ file. */
function asExpected(rows: Row[] | null, out: Feedback): boolean {
  if (rows === null || rows.every((r) => r.reason === 'vacation')) return out.kind === 'other';
  const first = rows[0];
  if (first?.reason === 'feedback') return out.kind === 'complaint' && out.feedbackType === first.extra.toLowerCase() && (rows.length === 1 || out.recipients.length === rows.length);
  if (out.kind !== 'dsn') return false;
  const ours = out.recipients.map((r) => String(r.bounceType)).sort();
  return ours.join(',') === rows.map(rowClass).sort().join(',');
}

async function score(): Promise<{ scored: number; missed: string[]; results: Map<string, Feedback> }> {
  const expected = expectedRows();
  const cases: [string, Row[] | null][] = [...expected.entries()];
  for (const f of readdirSync(corpusPath('sisimai', 'not'))) cases.push([`not/${f}`, null]);
  const missed: string[] = [];
  const results = new Map<string, Feedback>();
  for (const [file, rows] of cases) {
    const out = await parseFeedback(readFileSync(corpusPath('sisimai', ...file.split('/'))));
    results.set(file, out);
    if (!asExpected(rows, out)) missed.push(file);
  }
  return { scored: cases.length, missed: missed.sort(), results };
}

describe('parseFeedback on the sisimai corpus', () => {
  let run: Awaited<ReturnType<typeof score>>;
  beforeAll(async () => {
    run = await score();
  });

  it('classifies 576 of 590 files as the corpus says; the 14 misses are the known ones', () => {
    expect(run.scored).toBe(590);
    expect(run.missed).toEqual(Object.keys(KNOWN_MISSES).sort());
    expect(run.scored - run.missed.length).toBe(576);
  });

  it('covers every file: all 588 files with rows, lhost-aol-06 (no row) aside', () => {
    const listed = new Set(expectedRows().keys());
    const onDisk = readdirSync(corpusPath('sisimai', 'bsd')).map((f) => `bsd/${f}`);
    expect(onDisk.filter((f) => !listed.has(f))).toEqual(['bsd/lhost-aol-06.eml']);
    expect(listed.size).toBe(588);
  });

  it('reports sub types: NoEmail for most userunknown files (informational, not scored)', async () => {
    // Files whose rows are all reason userunknown, and how many we give at least one NoEmail
    // recipient; sisimai's userunknown includes 5.2.1 "mailbox disabled", 5.1.0 and
    // "Recipient address rejected: Access denied" cases that stay General here.
    const expected = expectedRows();
    let files = 0;
    let noEmail = 0;
    for (const [file, rows] of expected) {
      if (!rows.every((r) => r.reason === 'userunknown')) continue;
      files++;
      const out = run.results.get(file);
      if (out?.kind === 'dsn' && out.recipients.some((r) => r.bounceSubType === 'NoEmail')) noEmail++;
    }
    expect({ files, noEmail }).toEqual({ files: 134, noEmail: 111 });
    // Every file with a hardbounce=true row coded 5.x.x has a Permanent recipient here, but
    // for the known misses (opensmtpd-12: a delay warning sisimai codes 5.0.932).
    const hardMissed = [...expected]
      .filter(([file, rows]) => !(file in KNOWN_MISSES) && rows.some((r) => r.hardbounce && rowClass(r) === 'Permanent'))
      .filter(([file]) => {
        const out = run.results.get(file);
        return !(out?.kind === 'dsn' && out.recipients.some((r) => r.bounceType === 'Permanent'));
      })
      .map(([file]) => file);
    expect(hardMissed).toEqual([]);
  });

  it('reads the delivery reports of the other corpora', async () => {
    const bounce = await parseFeedback(readFileSync(corpusPath('postal-mime', 'bounce.eml')));
    expect(bounce).toMatchObject({ kind: 'dsn', originalMessageId: 'e85f1c9b-9b51-4028-8ec0-0a657155028e@app.fastmail.com' });
    expect(bounce.kind === 'dsn' && bounce.recipients).toEqual([expect.objectContaining({ address: 'htfgvhyufthdgcvhgjyfthgc@ethereal.email', bounceType: 'Permanent', bounceSubType: 'NoEmail' })]);
    const arf = await parseFeedback(readFileSync(corpusPath('postal-mime', 'arf.eml')));
    expect(arf).toMatchObject({ kind: 'complaint', feedbackType: 'abuse', recipients: ['user@example.com'], originalMailFrom: 'somespammer@example.net' });
    const ses = await parseFeedback(readFileSync(corpusPath('mailparser', 'delivery-status.eml')));
    expect(ses.kind === 'dsn' && ses.recipients).toEqual([expect.objectContaining({ address: 'xxxx@xxxx.com', status: '5.1.1', bounceType: 'Permanent', bounceSubType: 'Suppressed' })]);
  });
});
