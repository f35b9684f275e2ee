/**
 * The rules a SAML assertion must meet once its signature is checked (clients/sso-saml.client.ts
 * reads the facts from the signed assertion only): issued by the configured IdP, with an ID,
 * for this SP (every AudienceRestriction names it), valid now within the clock skew
 * (Conditions NotBefore/NotOnOrAfter), and confirmed for bearer use at this ACS (a bearer
 * SubjectConfirmation whose data names the ACS as Recipient and has not expired, Web SSO
 * profile 4.1.4.2). Plain functions; the clock is the caller's.
 */
import { X509Certificate } from 'node:crypto';
import { AppError } from '@mailroom/contracts';

export const SAML_REFUSED = 'the SAML response was refused';
const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';

export interface SamlConfirmation {
  method: string | null;
  recipient: string | null;
  notBefore: string | null;
  notOnOrAfter: string | null;
  inResponseTo: string | null;
}

/** What the signed assertion says (and the InResponseTo of the response that carried it). */
export interface SamlAssertionFacts {
  id: string | null;
  issuer: string | null;
  /** The Response's InResponseTo (null: unasked, IdP-initiated). */
  inResponseTo: string | null;
  nameId: string | null;
  nameIdFormat: string | null;
  /** Each AudienceRestriction's audiences. */
  audiences: string[][];
  notBefore: string | null;
  notOnOrAfter: string | null;
  confirmations: SamlConfirmation[];
  attributes: Record<string, unknown>;
}

export interface SamlExpectations {
  idpEntityId: string;
  /** The SP's entity id; false only where a corpus has no AudienceRestriction to check. */
  audience: string | false;
  /** The ACS URL the bearer confirmation must name. */
  recipient: string;
  skewMs: number;
}

const refuse = (why: string) => new AppError('invalid_code', `${SAML_REFUSED}: ${why}`);

function instant(value: string, what: string): number {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw refuse(`${what} is not a date (${value})`);
  return ms;
}

/**
 * Checks the facts; answers until when the assertion could be replayed (its confirmation's
 * NotOnOrAfter, or the conditions' when earlier, plus the skew): the replay cache keeps its id so long.
 */
export function checkAssertion(facts: SamlAssertionFacts, want: SamlExpectations, now: Date): Date {
  const at = now.getTime();
  if (!facts.id) throw refuse('the assertion has no ID');
  if (facts.issuer !== want.idpEntityId) throw refuse(`the assertion was issued by ${facts.issuer ?? 'nobody named'}, not by the configured IdP ${want.idpEntityId}`);
  if (want.audience !== false) {
    if (facts.audiences.length === 0) throw refuse('the assertion has no AudienceRestriction');
    if (!facts.audiences.every((a) => a.includes(want.audience as string))) throw refuse(`the assertion is for another audience (${facts.audiences.flat().join(', ')}), not this service provider (${want.audience})`);
  }
  if (facts.notBefore !== null && at + want.skewMs < instant(facts.notBefore, 'Conditions NotBefore')) throw refuse(`the assertion is not valid before ${facts.notBefore}`);
  let expires = Infinity;
  if (facts.notOnOrAfter !== null) {
    expires = instant(facts.notOnOrAfter, 'Conditions NotOnOrAfter');
    if (at - want.skewMs >= expires) throw refuse(`the assertion expired at ${facts.notOnOrAfter}`);
  }
  const bearers = facts.confirmations.filter((c) => c.method === BEARER);
  if (bearers.length === 0) throw refuse('the assertion has no bearer SubjectConfirmation');
  const problems: string[] = [];
  for (const c of bearers) {
    if (c.recipient !== want.recipient) {
      problems.push(`it is addressed to ${c.recipient ?? 'no Recipient'}, not ${want.recipient}`);
      continue;
    }
    if (c.notOnOrAfter === null) {
      problems.push('its SubjectConfirmationData has no NotOnOrAfter');
      continue;
    }
    const until = instant(c.notOnOrAfter, 'SubjectConfirmationData NotOnOrAfter');
    if (at - want.skewMs >= until) {
      problems.push(`it expired at ${c.notOnOrAfter}`);
      continue;
    }
    if (c.notBefore !== null && at + want.skewMs < instant(c.notBefore, 'SubjectConfirmationData NotBefore')) {
      problems.push(`it is not valid before ${c.notBefore}`);
      continue;
    }
    // The confirmation is signed; the Response's own InResponseTo may not be (only the assertion
    // signed): an answer to a request must say so here, an unasked one must not (review finding).
    if (c.inResponseTo !== facts.inResponseTo) {
      problems.push(c.inResponseTo === null ? `it answers no request in its signed part, not ${facts.inResponseTo}` : `it answers the request ${c.inResponseTo}, not ${facts.inResponseTo ?? 'none (unasked)'}`);
      continue;
    }
    return new Date(Math.min(until, expires) + want.skewMs);
  }
  throw refuse(`no bearer confirmation holds: ${problems.join('; ')}`);
}

/** The first text value of an attribute (node-saml gives a string, or an array of them for several values). */
export function attributeText(value: unknown): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' && first.trim() ? first.trim() : undefined;
}

const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';

/**
 * The claims an SSO sign-in reads (sso-rules.ts) from an assertion: `sub` is the NameID, the
 * address the mapped attribute (or the NameID when it is an emailAddress and the attribute is
 * absent). The IdP's assertion is what vouches for the address (SAML has no email_verified):
 * the configuration's allowed domains, verified domains of the organization, bound what it may say.
 */
export function samlClaims(facts: SamlAssertionFacts, mapping: { email: string; name: string }): Record<string, unknown> {
  const email = attributeText(facts.attributes[mapping.email]) ?? (facts.nameIdFormat === EMAIL_FORMAT ? (facts.nameId ?? undefined) : undefined);
  return {
    sub: facts.nameId ?? undefined,
    [mapping.email]: email?.toLowerCase(),
    email: email?.toLowerCase(),
    email_verified: true,
    [mapping.name]: attributeText(facts.attributes[mapping.name]),
  };
}

/** What an admin needs to know of a certificate (base64 DER): its SHA-256 fingerprint and validity. */
export function certificateFacts(base64: string): { fingerprint_sha256: string; not_before: Date; not_after: Date } {
  const cert = new X509Certificate(Buffer.from(base64, 'base64'));
  return { fingerprint_sha256: cert.fingerprint256, not_before: new Date(cert.validFrom), not_after: new Date(cert.validTo) };
}

/** The certificates valid at `now`, and why the others are not. */
export function usableCertificates(certs: readonly string[], now: Date): { valid: string[]; problems: string[] } {
  const valid: string[] = [];
  const problems: string[] = [];
  for (const c of certs) {
    const f = certificateFacts(c);
    if (now < f.not_before) problems.push(`the certificate ${f.fingerprint_sha256} is not valid before ${f.not_before.toISOString()}`);
    else if (now >= f.not_after) problems.push(`the certificate ${f.fingerprint_sha256} expired at ${f.not_after.toISOString()}`);
    else valid.push(c);
  }
  return { valid, problems };
}

/** Whether metadata read at `readAt` is older than `maxAgeMs` (never read: stale). */
export function metadataStale(readAt: Date | null, now: Date, maxAgeMs: number): boolean {
  return readAt === null || now.getTime() - readAt.getTime() >= maxAgeMs;
}

/** Whether metadata is to be read again: read long enough ago, and not tried in vain within the interval either. */
export function metadataDue(readAt: Date | null, triedAt: Date | null, now: Date, maxAgeMs: number): boolean {
  return metadataStale(readAt, now, maxAgeMs) && (triedAt === null || metadataStale(triedAt, now, maxAgeMs));
}

/**
 * Why metadata read again (at a login, or by the test route) may not replace a configuration's
 * (undefined: it may): it must name the same IdP, hold a signing certificate valid now, and
 * (unless plain http is allowed: development) send sign-ins to an https SSO URL. One rule for
 * both readers (review finding: two copies, neither with the https check).
 */
export function refreshRefusal(
  metadata: { entityId: string; ssoUrl: string; certificates: readonly string[] },
  issuer: string,
  now: Date,
  allowHttp: boolean,
): { problem: 'issuer_mismatch' | 'no_valid_certificate' | 'not_saml_metadata'; message: string } | undefined {
  if (metadata.entityId !== issuer) {
    return { problem: 'issuer_mismatch', message: `the metadata now names the IdP ${metadata.entityId}, not ${issuer}: save it again (PATCH with idp_metadata_url) if the IdP really changed; the identities linked through it will be unlinked` };
  }
  const { valid, problems } = usableCertificates(metadata.certificates, now);
  if (valid.length === 0) return { problem: 'no_valid_certificate', message: `no signing certificate of the IdP is valid now: ${problems.join('; ')}` };
  if (!allowHttp && !metadata.ssoUrl.startsWith('https://')) return { problem: 'not_saml_metadata', message: `the IdP's SingleSignOnService (${metadata.ssoUrl}) must be an https URL` };
  return undefined;
}
