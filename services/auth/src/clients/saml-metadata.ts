/**
 * Reading a SAML IdP's metadata (SAML metadata 2.0): its entity id, the URL of its Single
 * Sign-On service (HTTP-Redirect binding, which the SP's requests use) and its signing
 * certificates. A document with a DOCTYPE is refused (no entity may be declared), and so is
 * one that is not one IdP's EntityDescriptor; every problem is said in words an admin can act on.
 */
import { X509Certificate } from 'node:crypto';
import { DOMParser, type Document, type Element } from '@xmldom/xmldom';

const MD = 'urn:oasis:names:tc:SAML:2.0:metadata';
const DS = 'http://www.w3.org/2000/09/xmldsig#';
const REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';

export interface IdpMetadata {
  entityId: string;
  ssoUrl: string;
  /** Base64 DER, as in the metadata (whitespace removed). */
  certificates: string[];
}

export class MetadataError extends Error {
  override readonly name = 'MetadataError';
}

/** Parses XML refusing DOCTYPEs and malformed documents (MetadataError or the caller's error). */
export function parseXml(xml: string, fail: (message: string) => Error = (m) => new MetadataError(m)): Document {
  if (/<!DOCTYPE/i.test(xml)) throw fail('the XML has a DOCTYPE, which is not accepted (no entity may be declared)');
  let problem: string | undefined;
  let doc: Document | undefined;
  try {
    doc = new DOMParser({
      onError: (level, message) => {
        if (level !== 'warning') problem ??= message;
      },
    }).parseFromString(xml, 'text/xml');
  } catch (err) {
    problem ??= err instanceof Error ? err.message : String(err);
  }
  if (problem !== undefined || !doc?.documentElement) throw fail(`the XML is not well-formed (${(problem ?? 'no root element').split('\n')[0]})`);
  return doc;
}

function children(parent: Element, ns: string, name: string): Element[] {
  return Array.from(parent.getElementsByTagNameNS(ns, name));
}

/** The IdP's metadata as given (an EntityDescriptor, or an EntitiesDescriptor holding one IdP). */
export function readIdpMetadata(xml: string): IdpMetadata {
  const doc = parseXml(xml);
  const root = doc.documentElement!;
  if (root.namespaceURI !== MD || (root.localName !== 'EntityDescriptor' && root.localName !== 'EntitiesDescriptor')) {
    throw new MetadataError(`this is not SAML metadata: the root element is ${root.localName ?? root.nodeName}, not md:EntityDescriptor (${MD})`);
  }
  const entities = root.localName === 'EntityDescriptor' ? [root] : children(root, MD, 'EntityDescriptor');
  const idps = entities.filter((e) => children(e, MD, 'IDPSSODescriptor').length > 0);
  if (idps.length !== 1) throw new MetadataError(idps.length === 0 ? 'the metadata describes no identity provider (no IDPSSODescriptor)' : `the metadata describes ${idps.length} identity providers: give the one of your IdP`);
  const entity = idps[0]!;
  const entityId = entity.getAttribute('entityID')?.trim();
  if (!entityId) throw new MetadataError('the EntityDescriptor has no entityID');
  const idp = children(entity, MD, 'IDPSSODescriptor')[0]!;
  const protocols = (idp.getAttribute('protocolSupportEnumeration') ?? '').split(/\s+/);
  if (!protocols.includes('urn:oasis:names:tc:SAML:2.0:protocol')) throw new MetadataError('the IDPSSODescriptor does not support SAML 2.0 (protocolSupportEnumeration)');
  const sso = children(idp, MD, 'SingleSignOnService').find((s) => s.getAttribute('Binding') === REDIRECT);
  const ssoUrl = sso?.getAttribute('Location')?.trim();
  if (!ssoUrl) throw new MetadataError(`the IdP has no SingleSignOnService with the HTTP-Redirect binding (${REDIRECT}), which this service provider sends its requests by`);
  if (!/^https?:\/\//.test(ssoUrl)) throw new MetadataError(`the SingleSignOnService location ${ssoUrl} is not an http(s) URL`);
  const certificates = children(idp, MD, 'KeyDescriptor')
    .filter((k) => (k.getAttribute('use') ?? 'signing') === 'signing')
    .flatMap((k) => children(k, DS, 'X509Certificate'))
    .map((c) => (c.textContent ?? '').replace(/\s+/g, ''))
    .filter(Boolean);
  if (certificates.length === 0) throw new MetadataError('the IdP publishes no signing certificate (KeyDescriptor use="signing" with ds:X509Certificate): its responses could not be checked');
  for (const cert of certificates) {
    try {
      new X509Certificate(Buffer.from(cert, 'base64'));
    } catch {
      throw new MetadataError('a signing certificate of the metadata is not an X.509 certificate (base64 DER)');
    }
  }
  return { entityId, ssoUrl, certificates: [...new Set(certificates)] };
}

/** A certificate of the metadata as PEM (what XML signature checks take). */
export function certificatePem(base64: string): string {
  return `-----BEGIN CERTIFICATE-----\n${base64.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`;
}
