import { checkAssertion, metadataDue, metadataStale, refreshRefusal, samlClaims, type SamlAssertionFacts, type SamlExpectations } from './saml-rules';

const NOW = new Date('2026-01-01T12:00:00Z');
const want: SamlExpectations = { idpEntityId: 'https://idp.example/', audience: 'https://sp.example/md/org_1', recipient: 'https://sp.example/acs', skewMs: 60_000 };
const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';

function facts(over: Partial<SamlAssertionFacts> = {}): SamlAssertionFacts {
  return {
    id: '_a1',
    issuer: want.idpEntityId,
    inResponseTo: '_req',
    nameId: 'person-1',
    nameIdFormat: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
    audiences: [[want.audience as string]],
    notBefore: '2026-01-01T11:59:00Z',
    notOnOrAfter: '2026-01-01T12:05:00Z',
    confirmations: [{ method: BEARER, recipient: want.recipient, notBefore: null, notOnOrAfter: '2026-01-01T12:04:00Z', inResponseTo: '_req' }],
    attributes: { email: 'Ann@Corp.example', name: ['Ann', 'A.'] },
    ...over,
  };
}

const refusal = (f: SamlAssertionFacts, now = NOW) => {
  try {
    checkAssertion(f, want, now);
    return 'accepted';
  } catch (err) {
    return (err as Error).message;
  }
};

describe('checkAssertion', () => {
  it('accepts a good assertion and says until when it could be replayed (earliest expiry plus the skew)', () => {
    expect(checkAssertion(facts(), want, NOW)).toEqual(new Date('2026-01-01T12:05:00Z'));
  });

  it('refuses another issuer, a missing ID, another audience (every restriction must name us)', () => {
    expect(refusal(facts({ issuer: 'https://evil.example/' }))).toContain('issued by https://evil.example/');
    expect(refusal(facts({ id: null }))).toContain('no ID');
    expect(refusal(facts({ audiences: [['https://other.example']] }))).toContain('another audience');
    expect(refusal(facts({ audiences: [[want.audience as string], ['https://other.example']] }))).toContain('another audience');
    expect(refusal(facts({ audiences: [] }))).toContain('no AudienceRestriction');
  });

  it('applies the clock skew on both sides of the validity window', () => {
    expect(refusal(facts(), new Date('2026-01-01T12:04:59Z'))).toBe('accepted');
    expect(refusal(facts(), new Date('2026-01-01T12:05:00Z'))).toContain('expired');
    expect(refusal(facts({ notBefore: '2026-01-01T12:00:59Z' }))).toBe('accepted');
    expect(refusal(facts({ notBefore: '2026-01-01T12:01:01Z' }))).toContain('not valid before');
    expect(refusal(facts({ notOnOrAfter: '2026-01-01T11:58:00Z' }))).toContain('expired at 2026-01-01T11:58:00Z');
  });

  it('requires a bearer confirmation for this ACS, unexpired, answering the same request', () => {
    const c = facts().confirmations[0]!;
    expect(refusal(facts({ confirmations: [] }))).toContain('no bearer SubjectConfirmation');
    expect(refusal(facts({ confirmations: [{ ...c, method: 'urn:oasis:names:tc:SAML:2.0:cm:holder-of-key' }] }))).toContain('no bearer');
    expect(refusal(facts({ confirmations: [{ ...c, recipient: 'https://evil.example/acs' }] }))).toContain('addressed to https://evil.example/acs');
    expect(refusal(facts({ confirmations: [{ ...c, notOnOrAfter: null }] }))).toContain('no NotOnOrAfter');
    expect(refusal(facts({ confirmations: [{ ...c, notOnOrAfter: '2026-01-01T11:00:00Z' }] }))).toContain('expired');
    expect(refusal(facts({ confirmations: [{ ...c, inResponseTo: '_other' }] }))).toContain('answers the request _other');
    expect(refusal(facts({ confirmations: [{ ...c, notOnOrAfter: 'soon' }] }))).toContain('not a date');
    // The request answered is the signed confirmation's, not the (maybe unsigned) Response's (review finding):
    // an unasked assertion wrapped in a Response naming a request is refused, and an asked one read as unasked too.
    expect(refusal(facts({ confirmations: [{ ...c, inResponseTo: null }] }))).toContain('answers no request in its signed part, not _req');
    expect(refusal(facts({ inResponseTo: null }))).toContain('answers the request _req, not none (unasked)');
    expect(refusal(facts({ inResponseTo: null, confirmations: [{ ...c, inResponseTo: null }] }))).toBe('accepted');
    // One good confirmation among bad ones is enough.
    expect(refusal(facts({ confirmations: [{ ...c, recipient: 'https://evil.example/acs' }, c] }))).toBe('accepted');
  });
});

describe('samlClaims', () => {
  it('reads the mapped attributes, the NameID as subject, and vouches for the address', () => {
    expect(samlClaims(facts(), { email: 'email', name: 'name' })).toEqual({ sub: 'person-1', email: 'ann@corp.example', email_verified: true, name: 'Ann' });
  });

  it('falls back on an emailAddress NameID only', () => {
    const byNameId = facts({ attributes: {}, nameId: 'bob@corp.example', nameIdFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress' });
    expect(samlClaims(byNameId, { email: 'email', name: 'name' }).email).toBe('bob@corp.example');
    expect(samlClaims(facts({ attributes: {} }), { email: 'email', name: 'name' }).email).toBeUndefined();
  });
});

describe('metadataStale', () => {
  it('is stale never read, or once as old as allowed', () => {
    expect(metadataStale(null, NOW, 60_000)).toBe(true);
    expect(metadataStale(new Date(NOW.getTime() - 59_999), NOW, 60_000)).toBe(false);
    expect(metadataStale(new Date(NOW.getTime() - 60_000), NOW, 60_000)).toBe(true);
  });
});

describe('metadataDue', () => {
  it('is due when stale and not tried in vain within the interval', () => {
    const old = new Date(NOW.getTime() - 120_000);
    expect(metadataDue(old, null, NOW, 60_000)).toBe(true);
    expect(metadataDue(old, new Date(NOW.getTime() - 30_000), NOW, 60_000)).toBe(false);
    expect(metadataDue(old, old, NOW, 60_000)).toBe(true);
    expect(metadataDue(new Date(NOW.getTime() - 1_000), null, NOW, 60_000)).toBe(false);
  });
});

describe('refreshRefusal', () => {
  it('refuses another IdP first, then metadata without a certificate valid now (the https rule: sso-configs.spec)', () => {
    const md = { entityId: want.idpEntityId, ssoUrl: 'https://idp.example/sso', certificates: [] };
    expect(refreshRefusal({ ...md, entityId: 'https://other.example/' }, want.idpEntityId, NOW, false)).toMatchObject({ problem: 'issuer_mismatch' });
    expect(refreshRefusal(md, want.idpEntityId, NOW, false)).toMatchObject({ problem: 'no_valid_certificate' });
  });
});
