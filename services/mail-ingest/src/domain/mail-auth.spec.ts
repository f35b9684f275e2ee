import { generateKeyPairSync } from 'node:crypto';
import { dkimSign } from 'mailauth';
import { startDnsServer, type DnsServer } from '@mailroom/testing';
import { createResolver, type MailAuthResolver } from '../clients/dns-resolver';
import { checkMailAuth, type MailToAuthenticate } from './mail-auth';

const MTA = 'mx.mailroom.test';
const message = (from: string) =>
  Buffer.from(`From: ${from}\r\nTo: agent@mailroom.test\r\nSubject: hello\r\nDate: Mon, 2 Feb 2026 10:00:00 +0000\r\n\r\nHi.\r\n`);

describe('checkMailAuth', () => {
  let dns: DnsServer;
  let resolver: MailAuthResolver;
  const check = (mail: Partial<MailToAuthenticate>, timeoutMs = 5_000) =>
    checkMailAuth(
      { raw: message('Alice <alice@example.test>'), ip: '192.0.2.1', helo: 'mail.example.test', mailFrom: 'alice@example.test', mta: MTA, ...mail },
      { resolve: resolver.resolve, timeoutMs },
    );

  beforeAll(async () => {
    dns = await startDnsServer(
      [
        { name: 'example.test', type: 'TXT', text: 'v=spf1 ip4:192.0.2.0/24 -all' },
        { name: '_dmarc.example.test', type: 'TXT', text: 'v=DMARC1; p=reject' },
        { name: 'mail.example.test', type: 'TXT', text: 'v=spf1 ip4:192.0.2.1 -all' },
        { name: 'soft.test', type: 'TXT', text: 'v=spf1 ~all' },
      ],
      { faults: [{ name: 'broken.test', servfail: true }, { name: 'slow.test', delayMs: 10_000 }] },
    );
    resolver = createResolver({ servers: [dns.servers], timeoutMs: 100, tries: 1 });
  });

  afterAll(async () => {
    resolver.cancel();
    await dns.close();
  });

  it('passes SPF and DMARC for an aligned sender, and names the policy', async () => {
    const verdicts = await check({});
    expect(verdicts.spf).toEqual({ result: 'pass', details: expect.stringContaining('designates 192.0.2.1 as permitted sender') });
    expect(verdicts.dmarc).toEqual({ result: 'pass', details: 'p=reject' });
    expect(verdicts.dkim).toEqual({ result: 'none' });
    expect(verdicts.arc).toEqual({ result: 'none' });
  });

  it('fails SPF and DMARC for an address the domain does not allow', async () => {
    const verdicts = await check({ ip: '198.51.100.7' });
    expect(verdicts.spf.result).toBe('fail');
    expect(verdicts.dmarc).toEqual({ result: 'fail', details: 'p=reject' });
  });

  it('reports softfail as it is', async () => {
    expect((await check({ mailFrom: 'bob@soft.test' })).spf.result).toBe('softfail');
  });

  it('checks the HELO name for a bounce (empty envelope sender)', async () => {
    expect((await check({ mailFrom: '' })).spf.result).toBe('pass');
    expect((await check({ mailFrom: '', helo: 'other.example.test' })).spf.result).toBe('none');
  });

  it('is temperror when DNS answers SERVFAIL or not at all', async () => {
    expect((await check({ mailFrom: 'x@broken.test' })).spf.result).toBe('temperror');
    expect((await check({ mailFrom: 'x@slow.test' })).spf.result).toBe('temperror');
  });

  it('gives temperror for everything when the whole check runs out of time, without waiting for DNS', async () => {
    const patient = createResolver({ servers: [dns.servers], timeoutMs: 5_000, tries: 1 });
    const started = Date.now();
    const verdicts = await checkMailAuth(
      { raw: message('x@slow.test'), ip: '192.0.2.1', helo: 'mail.example.test', mailFrom: 'x@slow.test', mta: MTA },
      { resolve: patient.resolve, timeoutMs: 200 },
    );
    expect(Date.now() - started).toBeLessThan(1_000);
    patient.cancel();
    const timedOut = { result: 'temperror', details: 'not finished within 200 ms' };
    expect(verdicts).toEqual({ spf: timedOut, dkim: timedOut, dmarc: timedOut, arc: timedOut });
  });

  it('gives temperror for everything when mailauth throws', async () => {
    // In strict mode mailauth refuses an authserv-id that is not a token.
    const verdicts = await check({ mta: 'not a host name' });
    expect(verdicts.spf).toEqual({ result: 'temperror', details: expect.stringMatching(/^mailauth failed: /) });
    expect(new Set([verdicts.spf, verdicts.dkim, verdicts.dmarc, verdicts.arc]).size).toBe(1);
  });

  describe('DKIM', () => {
    const key = generateKeyPairSync('ed25519');
    const publicKey = key.publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('base64');
    const privateKey = key.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();

    async function signed(domains: string[]): Promise<Buffer> {
      const raw = message('Alice <alice@example.test>');
      const { signatures } = await dkimSign(raw, {
        signingDomain: 'unused',
        selector: 'unused',
        privateKey,
        signatureData: domains.map((domain) => ({ signingDomain: domain, selector: 's1', privateKey })),
      });
      return Buffer.concat([Buffer.from(signatures), raw]);
    }

    beforeAll(() => {
      dns.add({ name: 's1._domainkey.example.test', type: 'TXT', text: `v=DKIM1; k=ed25519; p=${publicKey}` });
    });

    it('passes if one signature passes, naming the domains that passed', async () => {
      // nokey.test publishes no key: its signature is neutral, which does not spoil the pass.
      const verdicts = await check({ raw: await signed(['example.test', 'nokey.test']), ip: '198.51.100.7' });
      expect(verdicts.dkim).toEqual({ result: 'pass', details: 'example.test' });
      expect(verdicts.dmarc).toEqual({ result: 'pass', details: 'p=reject' });
    });

    it('reports the worst failure with every signature when none passes', async () => {
      const tampered = Buffer.from((await signed(['example.test', 'nokey.test'])).toString().replace('Hi.', 'Ho.'));
      const { dkim } = await check({ raw: tampered });
      expect(dkim.result).toBe('fail');
      expect(dkim.details).toMatch(/^example\.test\/s1: fail \(body hash did not verify\); nokey\.test\/s1: (fail|neutral)/);
    });
  });
});
