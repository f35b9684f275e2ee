/**
 * node-saml's signature corpus (fixtures/corpora/node-saml, node-saml@1d8d66f) through our
 * whole check of a response: the library's signature check as SsoSamlClient configures it,
 * then the assertion rules (domain/saml-rules.ts) at the corpus's clock (2020-09-25T16:59Z,
 * injected). The corpus's configuration: its IdP certificate, SP issuer onesaml_login,
 * callback http://localhost/saml/consume; its responses name no audience (the library's
 * own corpus test sets audience false, as here) and are addressed to the Recipient
 * https://evil-corp.madness.com/sso/callback by https://evil-corp.com, which the expectations
 * name. Every valid/ response is accepted, every invalid/ one refused (signature wrapping,
 * unsigned or re-signed parts, advice tricks, multiple roots).
 *
 * One valid/ file is refused, on purpose: response.root-signed.assertion-unsigned-encrypted.xml
 * is valid as to its signature (root signed) and decrypts, but its one bearer confirmation's
 * NotOnOrAfter is "2020-09-25T16=7:00:00+00:00", not a date: an assertion whose confirmation has
 * no readable expiry is refused (node-saml's own suite never accepts that file either). The
 * test shows it gets past signature and decryption and fails on that date alone.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { corpusPath } from '@mailroom/testing';
import { checkAssertion } from '../domain/saml-rules';
import { SsoSamlClient, type SamlSettings } from './sso-saml.client';

const dir = (...p: string[]) => corpusPath('node-saml', ...p);
const pemBody = readFileSync(dir('idp-cert.pem'), 'utf8').replace(/-----[^-]+-----|\s+/g, '');
const settings: SamlSettings = { spEntityId: 'onesaml_login', acsUrl: 'http://localhost/saml/consume', idpEntityId: 'https://evil-corp.com', ssoUrl: 'https://evil-corp.com/sso', certificates: [pemBody] };
const client = new SsoSamlClient(() => Promise.reject(new Error('no network')), { privateKey: readFileSync(dir('testshib encryption pvk.pem'), 'utf8'), certificate: '' });
const NOW = new Date('2020-09-25T16:59:00Z');

async function accepted(file: string): Promise<true | string> {
  try {
    const facts = await client.verify(settings, readFileSync(file).toString('base64'), false);
    checkAssertion(facts, { idpEntityId: settings.idpEntityId, audience: false, recipient: 'https://evil-corp.madness.com/sso/callback', skewMs: 60_000 }, NOW);
    return true;
  } catch (err) {
    return (err as Error).message;
  }
}

const BAD_DATE = 'response.root-signed.assertion-unsigned-encrypted.xml';
const valid = readdirSync(dir('valid')).filter((f) => f.endsWith('.xml') && f !== BAD_DATE);
const invalid = readdirSync(dir('invalid')).filter((f) => f.endsWith('.xml'));

describe('the node-saml corpus through our SAML check', () => {
  it('has its 16 valid and 20 invalid responses', () => {
    expect([valid.length + 1, invalid.length]).toEqual([16, 20]);
  });

  it(`refuses valid/${BAD_DATE} for its confirmation's unreadable NotOnOrAfter only (signature and decryption pass)`, async () => {
    expect(await accepted(dir('valid', BAD_DATE))).toBe("the SAML response was refused: Error parsing NotOnOrAfter: '2020-09-25T16=7:00:00+00:00' is not a valid date");
  });

  it.each(valid)('accepts valid/%s', async (f) => {
    expect(await accepted(dir('valid', f))).toBe(true);
  });

  it.each(invalid)('refuses invalid/%s', async (f) => {
    expect(await accepted(dir('invalid', f))).toEqual(expect.any(String));
  });

  it('refuses a valid response an hour later (expired) and with an audience required', async () => {
    const file = readFileSync(dir('valid', 'response.root-signed.assertion-signed.xml')).toString('base64');
    const facts = await client.verify(settings, file, false);
    expect(() => checkAssertion(facts, { idpEntityId: settings.idpEntityId, audience: false, recipient: 'https://evil-corp.madness.com/sso/callback', skewMs: 60_000 }, new Date('2020-09-25T18:00:00Z'))).toThrow(/expired/);
    await expect(client.verify(settings, file)).rejects.toThrow(/AudienceRestriction|audience/);
  });
});
