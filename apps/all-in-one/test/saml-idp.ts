/**
 * A SAML 2.0 IdP on loopback for the tests, assembled from xml-crypto with its own key pair
 * (a self-signed certificate made at start): it publishes its metadata, takes AuthnRequests
 * (HTTP-Redirect binding: inflates SAMLRequest, reads its ID and ACS) and answers the way an
 * IdP does, with an HTML form that posts a signed Response (HTTP-POST binding) to the ACS,
 * for the person signed in at it (`user`). `response()` makes a Response directly (unasked,
 * or with another audience or times) for the refusals.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inflateRawSync } from 'node:zlib';
import { generate } from 'selfsigned';
import { SignedXml } from 'xml-crypto';
import { encrypt } from 'xml-encryption';

export interface SamlPerson {
  nameId: string;
  email: string;
  name?: string;
}

export interface ResponseOptions {
  person: SamlPerson;
  acs: string;
  audience: string;
  inResponseTo?: string;
  /** When the assertion and its confirmation expire (default: in 5 minutes). */
  notOnOrAfter?: Date;
  /** Which part is signed (default: the assertion). */
  sign?: 'assertion' | 'response';
  /** The SP's certificate (PEM): the signed assertion is sent encrypted to it (EncryptedAssertion). */
  encryptTo?: { certificate: string; publicKey: string };
}

export interface TestSamlIdp {
  entityId: string;
  metadataUrl: string;
  metadataXml: string;
  /** Who is signed in at the IdP: the next AuthnRequest is answered for them. */
  user: SamlPerson | undefined;
  /** The ACS's audience the IdP was configured with (the SP entity id), per ACS request. */
  audience: string;
  /** Set: the IdP encrypts the assertions of its logins to this SP certificate. */
  encryptTo: ResponseOptions['encryptTo'];
  response(options: ResponseOptions): Promise<string>;
  close(): Promise<void>;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const id = () => `_${randomBytes(16).toString('hex')}`;

export async function startSamlIdp(): Promise<TestSamlIdp> {
  const pems = await generate([{ name: 'commonName', value: 'test-idp' }], { keySize: 2048, algorithm: 'sha256' });
  const certBody = pems.cert.replace(/-----[^-]+-----|\s+/g, '');
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const entityId = `${base}/idp`;
  const metadataXml = `<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${entityId}">
  <md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol" WantAuthnRequestsSigned="false">
    <md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${certBody}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${base}/sso"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>`;

  function signXml(xml: string, part: 'assertion' | 'response'): string {
    const sig = new SignedXml({ privateKey: pems.private, publicCert: pems.cert, signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256', canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#' });
    const target = part === 'assertion' ? "/*[local-name(.)='Assertion']" : "/*[local-name(.)='Response']";
    sig.addReference({ xpath: target, digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256', transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'] });
    sig.computeSignature(xml, { location: { reference: `${target}/*[local-name(.)='Issuer']`, action: 'after' } });
    return sig.getSignedXml();
  }

  const idp: TestSamlIdp = {
    entityId,
    metadataUrl: `${base}/metadata`,
    metadataXml,
    user: undefined,
    audience: '',
    encryptTo: undefined,
    async response(o) {
      const now = new Date();
      const until = (o.notOnOrAfter ?? new Date(now.getTime() + 5 * 60_000)).toISOString();
      const irt = o.inResponseTo ? ` InResponseTo="${esc(o.inResponseTo)}"` : '';
      const name = o.person.name ? `<saml:Attribute Name="name"><saml:AttributeValue>${esc(o.person.name)}</saml:AttributeValue></saml:Attribute>` : '';
      const ns = 'xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion"';
      let assertion = `<saml:Assertion ${ns} ID="${id()}" Version="2.0" IssueInstant="${now.toISOString()}"><saml:Issuer>${entityId}</saml:Issuer><saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent">${esc(o.person.nameId)}</saml:NameID><saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotOnOrAfter="${until}" Recipient="${esc(o.acs)}"${irt}/></saml:SubjectConfirmation></saml:Subject><saml:Conditions NotBefore="${new Date(now.getTime() - 60_000).toISOString()}" NotOnOrAfter="${until}"><saml:AudienceRestriction><saml:Audience>${esc(o.audience)}</saml:Audience></saml:AudienceRestriction></saml:Conditions><saml:AuthnStatement AuthnInstant="${now.toISOString()}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement><saml:AttributeStatement><saml:Attribute Name="email"><saml:AttributeValue>${esc(o.person.email)}</saml:AttributeValue></saml:Attribute>${name}</saml:AttributeStatement></saml:Assertion>`;
      const sign = o.sign ?? 'assertion';
      if (sign === 'assertion') assertion = signXml(assertion, 'assertion');
      if (o.encryptTo) {
        const to = o.encryptTo;
        const encrypted = await new Promise<string>((resolve, reject) =>
          encrypt(assertion, { rsa_pub: to.publicKey, pem: to.certificate, encryptionAlgorithm: 'http://www.w3.org/2009/xmlenc11#aes256-gcm', keyEncryptionAlgorithm: 'http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p' }, (err, out) => (err ? reject(err) : resolve(out))),
        );
        assertion = `<saml:EncryptedAssertion>${encrypted}</saml:EncryptedAssertion>`;
      }
      const xml = `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ${ns} ID="${id()}" Version="2.0" IssueInstant="${now.toISOString()}" Destination="${esc(o.acs)}"${irt}><saml:Issuer>${entityId}</saml:Issuer><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>${assertion}</samlp:Response>`;
      return Buffer.from(sign === 'response' ? signXml(xml, 'response') : xml).toString('base64');
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };

  server.on('request', (req, res) => {
    void answer(req, res).catch(() => res.writeHead(500).end());
  });
  async function answer(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', base);
    if (url.pathname === '/metadata') {
      res.writeHead(200, { 'content-type': 'application/samlmetadata+xml' }).end(metadataXml);
      return;
    }
    if (url.pathname === '/sso') {
      const request = inflateRawSync(Buffer.from(url.searchParams.get('SAMLRequest') ?? '', 'base64')).toString('utf8');
      const requestId = /\sID="([^"]+)"/.exec(request)?.[1];
      const acs = /AssertionConsumerServiceURL="([^"]+)"/.exec(request)?.[1];
      if (!idp.user || !requestId || !acs) {
        res.writeHead(400).end('no user signed in at the IdP, or not an AuthnRequest');
        return;
      }
      const relay = url.searchParams.get('RelayState');
      const samlResponse = await idp.response({ person: idp.user, acs, audience: idp.audience, inResponseTo: requestId, ...(idp.encryptTo ? { encryptTo: idp.encryptTo } : {}) });
      const html = `<html><body onload="document.forms[0].submit()"><form method="post" action="${esc(acs)}"><input type="hidden" name="SAMLResponse" value="${samlResponse}"/>${relay !== null ? `<input type="hidden" name="RelayState" value="${esc(relay)}"/>` : ''}</form></body></html>`;
      res.writeHead(200, { 'content-type': 'text/html' }).end(html);
      return;
    }
    res.writeHead(404).end();
  }
  return idp;
}

/** What an IdP's auto-posting form carries: where it posts and its fields. */
export function readForm(html: string): { action: string; fields: Record<string, string> } {
  const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
  if (!action) throw new Error(`no form in ${html.slice(0, 200)}`);
  const fields: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/>/g)) fields[m[1]!] = m[2]!.replace(/&quot;/g, '"').replace(/&gt;/g, '>').replace(/&lt;/g, '<').replace(/&amp;/g, '&');
  return { action: action.replace(/&amp;/g, '&'), fields };
}
