import { randomBytes } from 'node:crypto';
import { contextSeal, serviceSealKey } from './context-seal';

const master = randomBytes(32);
const subject = 'ns1.rpc.auth.apikey.create';
const auth = JSON.stringify({ kind: 'api_key', key_id: 'key_1', org_id: 'org_1', env_id: 'env_1', permissions: [] });
const T0 = 1_800_000_000_000;

function seals(now = () => T0) {
  return {
    signer: contextSeal({ masterKey: master, keys: [], now }),
    verifier: contextSeal({ keys: [serviceSealKey(master, 'auth')], now }),
  };
}

describe('contextSeal', () => {
  it('verifies what the gateway sealed for this service, for that subject and JSON', () => {
    const { signer, verifier } = seals();
    const header = signer.sign(subject, auth)!;
    expect(header).toMatch(new RegExp(`^${T0}\\.[A-Za-z0-9_-]{43}$`));
    expect(verifier.verify(subject, auth, header)).toBe(true);
    // Without a namespace too.
    expect(verifier.verify('rpc.auth.apikey.create', auth, signer.sign('rpc.auth.apikey.create', auth))).toBe(true);
  });

  it('refuses a seal made for another subject', () => {
    const { signer, verifier } = seals();
    const header = signer.sign(subject, auth)!;
    expect(verifier.verify('ns1.rpc.auth.apikey.delete', auth, header)).toBe(false);
    expect(verifier.verify('ns2.rpc.auth.apikey.create', auth, header)).toBe(false);
  });

  it('seals for each service with its own key: a seal for orgs is no seal for auth', () => {
    const { signer, verifier } = seals();
    const orgs = contextSeal({ keys: [serviceSealKey(master, 'orgs')], now: () => T0 });
    const forOrgs = signer.sign('ns1.rpc.orgs.organization.get', auth)!;
    expect(orgs.verify('ns1.rpc.orgs.organization.get', auth, forOrgs)).toBe(true);
    expect(verifier.verify('ns1.rpc.orgs.organization.get', auth, forOrgs)).toBe(false);
    // What orgs could make with its own key (say, compromised) does not pass at auth.
    const forged = contextSeal({ masterKey: serviceSealKey(master, 'orgs'), keys: [], now: () => T0 }).sign(subject, auth);
    expect(verifier.verify(subject, auth, forged)).toBe(false);
  });

  it('refuses JSON changed after sealing, by one character', () => {
    const { signer, verifier } = seals();
    const header = signer.sign(subject, auth)!;
    expect(verifier.verify(subject, auth.replace('org_1', 'org_2'), header)).toBe(false);
    expect(verifier.verify(subject, `${auth} `, header)).toBe(false);
  });

  it('refuses a seal issued more than the window before or after now, and takes one at its edge', () => {
    let now = T0;
    const { signer, verifier } = seals(() => now);
    const header = signer.sign(subject, auth)!;
    now = T0 + 60_000;
    expect(verifier.verify(subject, auth, header)).toBe(true);
    now = T0 + 60_001;
    expect(verifier.verify(subject, auth, header)).toBe(false);
    now = T0 - 60_000;
    expect(verifier.verify(subject, auth, header)).toBe(true);
    now = T0 - 60_001;
    expect(verifier.verify(subject, auth, header)).toBe(false);
  });

  it('takes its window from the options', () => {
    let now = T0;
    const signer = contextSeal({ masterKey: master, keys: [], now: () => now });
    const verifier = contextSeal({ keys: [serviceSealKey(master, 'auth')], now: () => now, windowMs: 1_000 });
    const header = signer.sign(subject, auth)!;
    now = T0 + 1_001;
    expect(verifier.verify(subject, auth, header)).toBe(false);
  });

  it('refuses a seal under another master key, and takes it once that key is held too (a rotation)', () => {
    const other = randomBytes(32);
    const header = contextSeal({ masterKey: other, keys: [], now: () => T0 }).sign(subject, auth)!;
    expect(seals().verifier.verify(subject, auth, header)).toBe(false);
    const rotating = contextSeal({ keys: [serviceSealKey(master, 'auth'), serviceSealKey(other, 'auth')], now: () => T0 });
    expect(rotating.verify(subject, auth, header)).toBe(true);
  });

  it('refuses the issued-at of a seal changed after sealing', () => {
    const { signer, verifier } = seals();
    const header = signer.sign(subject, auth)!;
    expect(verifier.verify(subject, auth, header.replace(String(T0), String(T0 + 1)))).toBe(false);
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['garbage', 'not a seal'],
    ['without a dot', `${T0}${'A'.repeat(43)}`],
    ['without issued-at', `.${'A'.repeat(43)}`],
    ['with a short seal', `${T0}.${'A'.repeat(42)}`],
    ['with a long seal', `${T0}.${'A'.repeat(44)}`],
    ['with a negative issued-at', `-${T0}.${'A'.repeat(43)}`],
    ['with a seal of zeros', `${T0}.${'A'.repeat(43)}`],
  ])('answers false, without throwing, to a header %s', (_what, header) => {
    expect(seals().verifier.verify(subject, auth, header)).toBe(false);
  });

  it('signs nothing without a master key or for a subject of no service, and verifies nothing without keys', () => {
    const { signer, verifier } = seals();
    expect(verifier.sign(subject, auth)).toBeUndefined();
    expect(signer.sign('ns1.events.message.received', auth)).toBeUndefined();
    expect(verifier.signs).toBe(false);
    expect(verifier.verifies).toBe(true);
    expect(signer.signs).toBe(true);
    expect(signer.verifies).toBe(false);
    expect(signer.verify(subject, auth, signer.sign(subject, auth))).toBe(false);
  });

  it('refuses keys shorter than 32 bytes', () => {
    expect(() => contextSeal({ keys: [randomBytes(16)] })).toThrow(/at least 32 bytes/);
    expect(() => contextSeal({ masterKey: randomBytes(31), keys: [] })).toThrow(/at least 32 bytes/);
  });
});
