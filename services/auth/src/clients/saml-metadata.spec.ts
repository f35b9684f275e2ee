import { generate } from 'selfsigned';
import { readIdpMetadata } from './saml-metadata';

let cert: string;
beforeAll(async () => {
  cert = (await generate([{ name: 'commonName', value: 'idp' }], { keySize: 2048 })).cert.replace(/-----[^-]+-----|\s+/g, '');
});

const md = (inner: string, entity = 'entityID="https://idp.example/"') =>
  `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" ${entity}>${inner}</md:EntityDescriptor>`;
const idp = (keys: string, sso = '<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp.example/sso"/>') =>
  `<md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">${keys}${sso}</md:IDPSSODescriptor>`;
const key = (use = 'signing', body = () => cert) => `<md:KeyDescriptor use="${use}"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>\n${body()}\n</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`;

const problem = (xml: string) => {
  try {
    readIdpMetadata(xml);
    return 'read';
  } catch (err) {
    return (err as Error).message;
  }
};

describe('readIdpMetadata', () => {
  it('reads the entity id, the HTTP-Redirect SSO URL and the signing certificates (a KeyDescriptor without use signs)', () => {
    expect(readIdpMetadata(md(idp(key() + key('encryption'))))).toEqual({ entityId: 'https://idp.example/', ssoUrl: 'https://idp.example/sso', certificates: [cert] });
    expect(readIdpMetadata(md(idp(key().replace(' use="signing"', '')))).certificates).toEqual([cert]);
  });

  it('says precisely what is wrong', () => {
    expect(problem('<html/>')).toContain('not SAML metadata');
    expect(problem('<x')).toContain('not well-formed');
    expect(problem('<!DOCTYPE x [<!ENTITY a "b">]>' + md(idp(key())))).toContain('DOCTYPE');
    expect(problem(md('<md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"/>'))).toContain('no identity provider');
    expect(problem(md(idp(key()), ''))).toContain('no entityID');
    expect(problem(md(idp(key(), '')))).toContain('HTTP-Redirect');
    expect(problem(md(idp('')))).toContain('no signing certificate');
    expect(problem(md(idp(key('encryption'))))).toContain('no signing certificate');
    expect(problem(md(idp(key('signing', () => 'bm90IGEgY2VydA=='))))).toContain('not an X.509 certificate');
  });
});
