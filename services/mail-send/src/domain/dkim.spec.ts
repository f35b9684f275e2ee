import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { dkimSign, dkimVerify } from 'mailauth';
import type { OutboundJob } from '@mailroom/contracts';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { compose, type AttachmentSource } from './compose';
import { dkimSignature, relaxedBody, relaxedHeader, signDkim, StreamingDkimHash, type DkimKey } from './dkim';

const composed = async (j: OutboundJob, files: AttachmentSource) => buffer(await compose(j, files));

// The verifier is mailauth, an implementation independent of ours, against the published key.
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const ed = generateKeyPairSync('ed25519');
const now = new Date('2026-11-22T10:00:00Z');

function published(pub: KeyObject): string {
  const der = pub.export({ type: 'spki', format: 'der' });
  // RFC 8463: an ed25519 record carries the bare 32-byte key, not its SPKI wrapping.
  return pub.asymmetricKeyType === 'ed25519' ? `v=DKIM1; k=ed25519; p=${der.subarray(-32).toString('base64')}` : `v=DKIM1; k=rsa; p=${der.toString('base64')}`;
}

async function verify(message: Buffer, pub: KeyObject): Promise<{ result: string; bodyHash?: string }[]> {
  const resolver = async (name: string, type: string) => {
    if (name === 'mr1._domainkey.agents.test' && type === 'TXT') return [[published(pub)]];
    throw Object.assign(new Error(`no ${type} for ${name}`), { code: 'ENOTFOUND' });
  };
  const verdict = await dkimVerify(message, { resolver, curTime: now });
  return verdict.results.map((r) => ({ result: r.status.result, bodyHash: (r as { bodyHash?: string }).bodyHash }));
}

const keyOf = (privateKey: KeyObject): DkimKey => ({ domain: 'agents.test', selector: 'mr1', privateKey });

function job(over: Partial<OutboundJob> = {}): OutboundJob {
  return {
    message_id: 'msg_01KAB',
    message_id_header: 'msg_01KAB@agents.test',
    raw_id: 'raw_01KAB',
    org_id: 'org_1',
    env_id: 'env_1',
    inbox_id: 'inb_1',
    thread_id: 'thr_1',
    from: { name: 'Support', address: 'support@agents.test' },
    to: ['ada@sender.test'],
    cc: [],
    bcc: [],
    subject: 'Re: Invoice 42',
    text_body: 'Thanks, the amounts match.\n\nBest,\nSupport',
    html_body: null,
    in_reply_to: 'orig@sender.test',
    references: ['first@sender.test', 'orig@sender.test'],
    headers: {},
    attachments: [],
    created_at: now.toISOString(),
    ...over,
  };
}

const shapes: [string, Partial<OutboundJob>][] = [
  ['a plain reply', {}],
  ['text and HTML', { html_body: '<p>Thanks,   the amounts\tmatch.</p>' }],
  ['a unicode subject, display name and body', { subject: 'Re: Rechnung über 42 € — bitte prüfen 请', from: { name: 'Zoë Ünal', address: 'support@agents.test' }, text_body: 'Grüße aus Köln — 谢谢' }],
  ['cc, X- headers and long references', { cc: ['pat@sender.test', 'quinn@sender.test'], headers: { 'X-Ticket': 'T-4242', 'X-Campaign': 'spring' }, references: Array.from({ length: 30 }, (_, i) => `ref-${i}-abcdefghijklmnop@sender.test`) }],
  ['whitespace at line ends and trailing blank lines', { text_body: 'line one   \nline\t\ttwo \t\n\n\n\n' }],
  ['an empty text body', { text_body: '' }],
];

describe('DKIM signatures', () => {
  for (const [what, over] of shapes) {
    it(`verifies (RSA-2048 and ed25519): ${what}`, async () => {
      const raw = await composed(job(over), async () => null);
      expect(await verify(await signDkim(raw, keyOf(rsa.privateKey), now), rsa.publicKey)).toMatchObject([{ result: 'pass' }]);
      expect(await verify(await signDkim(raw, keyOf(ed.privateKey), now), ed.publicKey)).toMatchObject([{ result: 'pass' }]);
    });
  }

  it('verifies with attachments', async () => {
    const pdf = Buffer.from('%PDF-1.4 '.repeat(500));
    const attachments = [{ object: 'att_1', filename: 'report.pdf', content_type: 'application/pdf', content_id: null }];
    const raw = await composed(job({ attachments }), async () => Readable.from([pdf]));
    expect(await verify(await signDkim(raw, keyOf(rsa.privateKey), now), rsa.publicKey)).toMatchObject([{ result: 'pass' }]);
  });

  it('has the body hash mailauth computes for the same message', async () => {
    const raw = await composed(job({ html_body: '<p>x  y</p>', text_body: 'a \t b  \n\n' }), async () => null);
    const pem = rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const options = { signingDomain: 'agents.test', selector: 'mr1', privateKey: pem, canonicalization: 'relaxed/relaxed' };
    const theirs = (await dkimSign(raw, { ...options, signatureData: [options] })) as { signatures: string };
    const ours = (await signDkim(raw, keyOf(rsa.privateKey), now)).toString('latin1');
    const bh = (s: string) => /bh=([^;]+);/.exec(s.replace(/\r\n[ \t]/g, ' '))![1];
    expect(bh(ours)).toBe(bh(theirs.signatures));
  });

  it('fails when the body, a signed header or the sender changes, or a From is added', async () => {
    const signed = (await signDkim(await composed(job(), async () => null), keyOf(rsa.privateKey), now)).toString('latin1');
    const variants = [
      signed.replace('the amounts match', 'the amounts differ'),
      signed.replace('Subject: Re: Invoice 42', 'Subject: Re: Invoice 43'),
      signed.replace('To: ada@sender.test', 'To: eve@sender.test'),
      signed.replace('\r\nFrom: ', '\r\nFrom: Mallory <m@evil.test>\r\nFrom: '),
    ];
    for (const v of variants) {
      expect(v).not.toBe(signed);
      expect((await verify(Buffer.from(v, 'latin1'), rsa.publicKey))[0]!.result).not.toBe('pass');
    }
    // Refolding a header or adding spaces is what relaxed canonicalization forgives.
    const refolded = signed.replace('Subject: Re: Invoice 42', 'Subject:   Re:\r\n  Invoice   42 ');
    expect(await verify(Buffer.from(refolded, 'latin1'), rsa.publicKey)).toMatchObject([{ result: 'pass' }]);
  });

  it('fails against another key', async () => {
    const signed = await signDkim(await composed(job(), async () => null), keyOf(rsa.privateKey), now);
    expect((await verify(signed, generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey))[0]!.result).not.toBe('pass');
  });

  it('signs the header fields present, from the last instance up, and From once more', async () => {
    const signed = (await signDkim(await composed(job({ cc: ['pat@sender.test'] }), async () => null), keyOf(ed.privateKey), now)).toString('latin1');
    const header = signed.split(/\r\n(?![ \t])/)[0]!;
    expect(header).toMatch(/^DKIM-Signature: v=1; a=ed25519-sha256; c=relaxed\/relaxed; d=agents.test;/);
    expect(header).toContain(`t=${now.getTime() / 1000};`);
    expect(/ h=([^;]+);/.exec(header)![1]).toBe('from:from:subject:date:message-id:to:cc:in-reply-to:references:mime-version:content-type:content-transfer-encoding');
    for (const line of header.split('\r\n')) expect(line.length).toBeLessThanOrEqual(998);
  });

  it('signs a field that occurs twice, and breaks when the two trade places', async () => {
    const raw = Buffer.from(['From: a@agents.test', 'Cc: first@x.test', 'Subject: two', 'Cc: second@x.test', '', 'body', ''].join('\r\n'));
    const signed = (await signDkim(raw, keyOf(rsa.privateKey), now)).toString('latin1');
    expect(/ h=([^;]+);/.exec(signed)![1]).toBe('from:from:subject:cc:cc');
    expect(await verify(Buffer.from(signed, 'latin1'), rsa.publicKey)).toMatchObject([{ result: 'pass' }]);
    const swapped = signed.replace('Cc: first@x.test', 'Cc: tmp').replace('Cc: second@x.test', 'Cc: first@x.test').replace('Cc: tmp', 'Cc: second@x.test');
    expect((await verify(Buffer.from(swapped, 'latin1'), rsa.publicKey))[0]!.result).not.toBe('pass');
  });
});

describe('DKIM over a stream (StreamingDkimHash)', () => {
  /** The message cut into pieces of these sizes, over and over: line breaks and the header's end fall across chunks. */
  function chunks(raw: Buffer, sizes: number[]): Buffer[] {
    const out: Buffer[] = [];
    for (let at = 0, i = 0; at < raw.length; i++) {
      const n = sizes[i % sizes.length]!;
      out.push(raw.subarray(at, at + n));
      at += n;
    }
    return out;
  }
  const cuts = [[1], [2, 3], [7], [64, 1, 1], [100_000]];
  const bh = (s: string) => /bh=([^;]+);/.exec(s.replace(/\r\n[ \t]/g, ' '))![1];

  for (const [what, over] of [...shapes, ['an attachment', { attachments: [{ object: 'att_1', filename: 'a.pdf', content_type: 'application/pdf', content_id: null }] }] as [string, Partial<OutboundJob>]]) {
    it(`gives the buffered signature's body hash and header, and verifies: ${what}`, async () => {
      const raw = await composed(job(over), async () => Readable.from([Buffer.from('%PDF '.repeat(3000))]));
      const whole = (await signDkim(raw, keyOf(rsa.privateKey), now)).toString('latin1');
      for (const sizes of cuts) {
        const hash = new StreamingDkimHash();
        for (const c of chunks(raw, sizes)) hash.update(c);
        const { header, bodyHash } = hash.finish();
        expect(bodyHash).toBe(bh(whole));
        expect(raw.toString('latin1').startsWith(header)).toBe(true);
        const signature = await dkimSignature(header, bodyHash, keyOf(rsa.privateKey), now);
        expect(await verify(Buffer.concat([Buffer.from(signature, 'latin1'), raw]), rsa.publicKey)).toMatchObject([{ result: 'pass' }]);
      }
    });
  }

  it('hashes bodies with bare LF, trailing blank lines, no final line break, and none at all as the buffered one does', async () => {
    const bodies = ['a  b \n\n c\t\n\n\n', 'x\r\n\r\n', 'last line without break', '', '\r\n\r\n', 'one\rtwo\r\n  \r\nthree'];
    for (const body of bodies) {
      const raw = Buffer.from(`From: a@agents.test\r\nSubject: s\r\n\r\n${body}`, 'latin1');
      const whole = (await signDkim(raw, keyOf(ed.privateKey), now)).toString('latin1');
      for (const sizes of cuts) {
        const hash = new StreamingDkimHash();
        for (const c of chunks(raw, sizes)) hash.update(c);
        expect(hash.finish().bodyHash).toBe(bh(whole));
      }
    }
  });

  it('refuses a header that never ends within 256 KiB', () => {
    const hash = new StreamingDkimHash();
    expect(() => {
      for (let i = 0; i < 300; i++) hash.update(Buffer.from(`X-Filler-${i}: ${'y'.repeat(1000)}\r\n`));
    }).toThrow(/header longer than/);
  });
});

describe('relaxed canonicalization (RFC 6376 section 3.4.5 example)', () => {
  it('canonicalizes header fields', () => {
    expect(relaxedHeader('A: X')).toBe('a:X');
    expect(relaxedHeader('B : Y\t\r\n\tZ  ')).toBe('b:Y Z');
  });

  it('canonicalizes the body', () => {
    expect(relaxedBody(' C \r\nD \t E\r\n\r\n\r\n')).toBe(' C\r\nD E\r\n');
    expect(relaxedBody('')).toBe('');
    expect(relaxedBody('\r\n\r\n')).toBe('');
    expect(relaxedBody('no line break at the end')).toBe('no line break at the end\r\n');
  });
});
