/**
 * dkimpy's copy of the RFC 8463 appendix A example: one message signed twice by
 * football.example.com, with ed25519-sha256 (selector brisbane) and rsa-sha256 (selector test).
 * dkimpy verifies both; so must we, through the real resolver and our wrapper.
 */
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { corpusPath, startDnsServer, type DnsRecord, type DnsServer } from '@mailroom/testing';
import { createResolver, type MailAuthResolver } from '../clients/dns-resolver';
import { checkMailAuth } from './mail-auth';

/** The file has LF line ends; SMTP delivers CRLF, and that is what we verify. */
const SIGNED = readFileSync(corpusPath('dkimpy', 'rfc6376.signed.msg'), 'latin1').replace(/\r?\n/g, '\r\n');

/** RFC 8032 7.1 test 1's secret key is RFC 8463's signing key; the public half is derived from it. */
function ed25519PublicKey(): string {
  const seed = Buffer.from(readFileSync(corpusPath('dkimpy', 'rfc8032_7_1.key'), 'ascii').trim(), 'base64');
  const pkcs8Prefix = Buffer.from('302e020100300506032b657004220420', 'hex');
  const privateKey = createPrivateKey({ key: Buffer.concat([pkcs8Prefix, seed]), format: 'der', type: 'pkcs8' });
  // The raw 32-byte key is the tail of its SubjectPublicKeyInfo.
  return createPublicKey(privateKey).export({ format: 'der', type: 'spki' }).subarray(-32).toString('base64');
}

const ED25519_KEY: DnsRecord = { name: 'brisbane._domainkey.football.example.com', type: 'TXT', text: `v=DKIM1; k=ed25519; p=${ed25519PublicKey()}` };
/** test.txt is the RSA key of RFC 8463 A.2 (the RFC 6376 example key). */
const RSA_KEY: DnsRecord = {
  name: 'test._domainkey.football.example.com',
  type: 'TXT',
  text: readFileSync(corpusPath('dkimpy', 'test.txt'), 'ascii').trim(),
};

describe('DKIM corpus: dkimpy rfc6376.signed.msg (RFC 8463 example)', () => {
  let dns: DnsServer;
  let resolver: MailAuthResolver;
  let check: (raw: string) => ReturnType<typeof checkMailAuth>;

  beforeAll(async () => {
    dns = await startDnsServer([]);
    resolver = createResolver({ servers: [dns.servers], timeoutMs: 500, tries: 1 });
    check = (raw) =>
      checkMailAuth(
        { raw: Buffer.from(raw, 'latin1'), ip: '192.0.2.1', helo: 'mail.example.net', mailFrom: 'joe@football.example.com', mta: 'mx.mailroom.test' },
        { resolve: resolver.resolve, timeoutMs: 5_000 },
      );
  });

  afterAll(async () => {
    resolver.cancel();
    await dns.close();
  });

  it('derives the ed25519 key that RFC 8463 A.2 publishes', () => {
    expect(ed25519PublicKey()).toBe('11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=');
  });

  it.each([
    ['both keys', [ED25519_KEY, RSA_KEY]],
    ['only the ed25519 key', [ED25519_KEY]],
    ['only the RSA key', [RSA_KEY]],
  ])('passes with %s published', async (_, keys) => {
    dns.set(keys);
    const { dkim } = await check(SIGNED);
    expect(dkim).toEqual({ result: 'pass', details: 'football.example.com' });
  });

  it('fails both signatures on the body hash when one body byte changes', async () => {
    dns.set([ED25519_KEY, RSA_KEY]);
    const tampered = SIGNED.replace('hungry yet?', 'hungry yet!');
    expect(tampered).not.toBe(SIGNED);
    expect(tampered.length).toBe(SIGNED.length);
    const { dkim } = await check(tampered);
    expect(dkim).toEqual({
      result: 'fail',
      details:
        'football.example.com/brisbane: fail (body hash did not verify); football.example.com/test: fail (body hash did not verify)',
    });
  });

  it('fails both signatures when a signed header changes', async () => {
    dns.set([ED25519_KEY, RSA_KEY]);
    const { dkim } = await check(SIGNED.replace('Subject: Is dinner ready?', 'Subject: Is dinner ready!'));
    expect(dkim).toEqual({ result: 'fail', details: 'football.example.com/brisbane: fail (bad signature); football.example.com/test: fail (bad signature)' });
  });

  it('is neutral, not fail, when no key is published', async () => {
    dns.set([]);
    const { dkim } = await check(SIGNED);
    expect(dkim.result).toBe('neutral');
  });
});
