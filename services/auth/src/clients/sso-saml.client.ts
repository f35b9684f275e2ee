/**
 * An organization's SAML 2.0 IdP, through @node-saml/node-saml (its public API only):
 * - the AuthnRequest (HTTP-Redirect binding) with the attempt's request ID and RelayState;
 * - the response checked by the library: a signature by a certificate of the IdP's metadata
 *   on the response or on its one assertion (XML signature wrapping is the library's to
 *   refuse: only what a signature covers is read), decryption when encrypted, the audience
 *   (this organization's SP entity id). Its own clock checks are off (acceptedClockSkewMs -1)
 *   and InResponseTo is not tracked by it: both are ours (domain/saml-rules.ts, sso-sign-in.ts)
 *   with the injected clock and the attempts in PostgreSQL;
 * - the facts read from the signed assertion only (profile.getAssertion());
 * - the SP metadata, and the IdP's metadata fetched over the SSRF-guarded fetch.
 */
import { SAML, generateServiceProviderMetadata, type Profile } from '@node-saml/node-saml';
import { AppError } from '@mailroom/contracts';
import { SAML_REFUSED, type SamlAssertionFacts, type SamlConfirmation } from '../domain/saml-rules';
import type { SamlLoginPort, SamlMetadataLoad, SamlMetadataPort, SamlSettings } from '../domain/sso-ports';
export type { SamlSettings } from '../domain/sso-ports';
import { certificatePem, MetadataError, parseXml, readIdpMetadata } from './saml-metadata';
import { isBlocked, type GuardedFetch } from './sso-http';


/** The SP's own key pair (PEM): encrypted assertions are decrypted with it; its certificate is in the SP metadata. */
export interface SpKeyPair {
  privateKey: string;
  certificate: string;
}

/** What one IdP's metadata may weigh (as inline metadata may). */
const METADATA_MAX = 200_000;

/** xml2js as node-saml parses (explicit char key `_`, attributes in `$`, children in arrays). */
type Node = { _?: string; $?: Record<string, string> } & { [child: string]: unknown };

const first = (v: unknown): Node | undefined => (Array.isArray(v) ? (v[0] as Node | undefined) : undefined);
const all = (v: unknown): Node[] => (Array.isArray(v) ? (v as Node[]) : []);
const text = (n: Node | string | undefined): string | null => (typeof n === 'string' ? n : (n?._ ?? null));
const attr = (n: Node | undefined, name: string): string | null => n?.$?.[name] ?? null;

/** The facts of a signed assertion, as node-saml parsed it (namespace prefixes stripped). */
export function assertionFacts(profile: Profile): SamlAssertionFacts {
  const assertion = (profile.getAssertion?.() as { Assertion?: Node } | undefined)?.Assertion;
  if (!assertion) throw new AppError('invalid_code', `${SAML_REFUSED}: the signed part holds no assertion`);
  const subject = first(assertion.Subject);
  const nameId = first(subject?.NameID);
  const conditions = first(assertion.Conditions);
  const confirmations: SamlConfirmation[] = all(subject?.SubjectConfirmation).map((c) => {
    const data = first(c.SubjectConfirmationData);
    return { method: attr(c, 'Method'), recipient: attr(data, 'Recipient'), notBefore: attr(data, 'NotBefore'), notOnOrAfter: attr(data, 'NotOnOrAfter'), inResponseTo: attr(data, 'InResponseTo') };
  });
  return {
    id: attr(assertion, 'ID'),
    issuer: text(first(assertion.Issuer)),
    inResponseTo: typeof profile.inResponseTo === 'string' ? profile.inResponseTo : null,
    nameId: text(nameId),
    nameIdFormat: attr(nameId, 'Format'),
    audiences: all(conditions?.AudienceRestriction).map((r) => all(r.Audience).map((a) => text(a) ?? '')),
    notBefore: attr(conditions, 'NotBefore'),
    notOnOrAfter: attr(conditions, 'NotOnOrAfter'),
    confirmations,
    attributes: (profile.attributes as Record<string, unknown> | undefined) ?? {},
  };
}

export class SsoSamlClient implements SamlLoginPort, SamlMetadataPort {
  constructor(
    private readonly fetch: GuardedFetch,
    private readonly sp: SpKeyPair | undefined,
  ) {}

  /** Whether the platform can take encrypted assertions (it has an SP key pair). */
  get decrypts(): boolean {
    return this.sp !== undefined;
  }

  private saml(s: SamlSettings, requestId?: string, audience: string | false = s.spEntityId): SAML {
    return new SAML({
      issuer: s.spEntityId,
      callbackUrl: s.acsUrl,
      entryPoint: s.ssoUrl,
      idpCert: s.certificates.map(certificatePem),
      audience,
      // A signature on the response or on its assertion: either is enough, one is required.
      wantAuthnResponseSigned: false,
      wantAssertionsSigned: false,
      // Ours: the injected clock (saml-rules.ts) and the attempts (sso-sign-in.ts).
      acceptedClockSkewMs: -1,
      validateInResponseTo: 'never' as never,
      identifierFormat: null,
      disableRequestedAuthnContext: true,
      ...(this.sp ? { decryptionPvk: this.sp.privateKey } : {}),
      ...(requestId ? { generateUniqueId: () => requestId } : {}),
    });
  }

  /** The IdP's SSO URL with the AuthnRequest `requestId` and the RelayState. */
  authorizeUrl(s: SamlSettings, requestId: string, relayState: string): Promise<string> {
    return this.saml(s, requestId).getAuthorizeUrlAsync(relayState, undefined, {});
  }

  /**
   * The response's signature (and decryption, audience) checked by the library; the facts of
   * its signed assertion. `audience` false only for a corpus without audiences. A failed check: 400.
   */
  async verify(s: SamlSettings, samlResponse: string, audience: string | false = s.spEntityId): Promise<SamlAssertionFacts> {
    let profile: Profile | null;
    try {
      ({ profile } = await this.saml(s, undefined, audience).validatePostResponseAsync({ SAMLResponse: samlResponse }));
    } catch (err) {
      const why = err instanceof Error ? err.message.split('\n')[0] : 'refused';
      throw new AppError('invalid_code', `${SAML_REFUSED}: ${why}`, { cause: err });
    }
    if (!profile) throw new AppError('invalid_code', `${SAML_REFUSED}: it is not a sign-in (no assertion)`);
    return assertionFacts(profile);
  }

  /**
   * What the response says of itself, unchecked: its Issuer (where an unasked response says it
   * is from, to find its configuration, which then checks it), and whether its assertion is
   * encrypted (the library refuses a response with more than one assertion, encrypted or not).
   */
  peek(samlResponse: string): { issuer: string | undefined; encrypted: boolean } {
    try {
      const doc = parseXml(Buffer.from(samlResponse, 'base64').toString('utf8'));
      type Kid = { localName?: string; textContent?: string | null; childNodes?: ArrayLike<Kid> };
      const kids = Array.from(doc.documentElement?.childNodes ?? []) as Kid[];
      const issuerOf = (nodes: Kid[]) => nodes.find((n) => n.localName === 'Issuer')?.textContent?.trim() || undefined;
      // The Response's Issuer is optional (SAML core): many IdPs name themselves in the assertion only.
      const assertion = kids.find((n) => n.localName === 'Assertion');
      const issuer = issuerOf(kids) ?? (assertion ? issuerOf(Array.from(assertion.childNodes ?? [])) : undefined);
      return { issuer, encrypted: kids.some((n) => n.localName === 'EncryptedAssertion') };
    } catch {
      return { issuer: undefined, encrypted: false };
    }
  }

  /** The SP metadata of one organization (its entity id and ACS; the encryption certificate when the platform has one). */
  metadata(spEntityId: string, acsUrl: string): string {
    return generateServiceProviderMetadata({
      issuer: spEntityId,
      callbackUrl: acsUrl,
      identifierFormat: null,
      wantAssertionsSigned: false,
      ...(this.sp ? { decryptionPvk: this.sp.privateKey, decryptionCert: this.sp.certificate } : {}),
    });
  }

  /** The IdP's metadata given inline or fetched from its URL, read (entity id, SSO URL, certificates), or the problem. */
  async loadMetadata(source: { xml?: string | undefined; url?: string | undefined }): Promise<SamlMetadataLoad> {
    let xml = source.xml;
    if (xml === undefined) {
      const fetched = await this.fetchMetadata(source.url ?? '');
      if (!fetched.ok) return fetched;
      xml = fetched.xml;
    }
    try {
      return { ok: true, xml, metadata: readIdpMetadata(xml) };
    } catch (err) {
      if (err instanceof MetadataError) return { ok: false, problem: 'not_saml_metadata', message: err.message };
      throw err;
    }
  }

  /** The IdP's metadata at `url` (no redirects, the SSRF guard); a problem in words otherwise. */
  async fetchMetadata(url: string): Promise<{ ok: true; xml: string } | { ok: false; problem: 'unreachable' | 'blocked_destination' | 'not_saml_metadata'; message: string }> {
    let res: Response;
    try {
      res = await this.fetch(url, { headers: { accept: 'application/samlmetadata+xml, application/xml, text/xml' } });
    } catch (err) {
      if (isBlocked(err)) return { ok: false, problem: 'blocked_destination', message: `${url} resolves to a private, loopback or otherwise non-public address, which this platform does not call` };
      const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
      return { ok: false, problem: 'unreachable', message: `${url} could not be reached (${cause instanceof Error ? ((cause as { code?: string }).code ?? cause.message) : String(cause)})` };
    }
    if (res.status !== 200) return { ok: false, problem: 'not_saml_metadata', message: `${url} answered HTTP ${res.status}, not the IdP's metadata` };
    if (Number(res.headers.get('content-length') ?? 0) > METADATA_MAX) return { ok: false, problem: 'not_saml_metadata', message: `${url} answered more than ${METADATA_MAX} bytes: not one IdP's metadata` };
    // Read up to the limit whatever the headers say (a chunked answer has no length): past it, the read is cancelled.
    const body = await readAtMost(res, METADATA_MAX);
    if (body === undefined) return { ok: false, problem: 'not_saml_metadata', message: `${url} answered more than ${METADATA_MAX} bytes: not one IdP's metadata` };
    return { ok: true, xml: body };
  }
}

/** The body as text if it holds at most `max` bytes; undefined (the rest of it not read) when it holds more. */
export async function readAtMost(res: Response, max: number): Promise<string | undefined> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
