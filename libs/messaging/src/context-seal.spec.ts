import { createUser, type KeyPair } from '@nats-io/nkeys';
import { contextSeal } from './context-seal';

const seedOf = (kp: KeyPair) => new TextDecoder().decode(kp.getSeed());
const gateway = createUser();
const stranger = createUser();
const subject = 'ns1.rpc.auth.apikey.create';
const auth = JSON.stringify({ kind: 'api_key', key_id: 'key_1', org_id: 'org_1', env_id: 'env_1', permissions: [] });
const T0 = 1_800_000_000_000;

function seals(now = () => T0) {
  return {
    signer: contextSeal({ seed: seedOf(gateway), trusted: [], now }),
    verifier: contextSeal({ trusted: [gateway.getPublicKey()], now }),
  };
}

describe('contextSeal', () => {
  it('verifies what the trusted key sealed, for that subject and JSON', () => {
    const { signer, verifier } = seals();
    const header = signer.sign(subject, auth)!;
    expect(header).toMatch(new RegExp(`^${T0}\\.[A-Za-z0-9_-]{86}$`));
    expect(verifier.verify(subject, auth, header)).toBe(true);
  });

  it('refuses a seal made for another subject', () => {
    const { signer, verifier } = seals();
    const header = signer.sign(subject, auth)!;
    expect(verifier.verify('ns1.rpc.auth.apikey.delete', auth, header)).toBe(false);
    expect(verifier.verify('ns2.rpc.auth.apikey.create', auth, header)).toBe(false);
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
    const signer = contextSeal({ seed: seedOf(gateway), trusted: [], now: () => now });
    const verifier = contextSeal({ trusted: [gateway.getPublicKey()], now: () => now, windowMs: 1_000 });
    const header = signer.sign(subject, auth)!;
    now = T0 + 1_001;
    expect(verifier.verify(subject, auth, header)).toBe(false);
  });

  it('refuses a seal made by a key it does not trust, and takes it once that key is trusted too', () => {
    const forger = contextSeal({ seed: seedOf(stranger), trusted: [], now: () => T0 });
    const header = forger.sign(subject, auth)!;
    expect(seals().verifier.verify(subject, auth, header)).toBe(false);
    const rotating = contextSeal({ trusted: [gateway.getPublicKey(), stranger.getPublicKey()], now: () => T0 });
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
    ['without a dot', `${T0}${'A'.repeat(86)}`],
    ['without issued-at', `.${'A'.repeat(86)}`],
    ['with a short signature', `${T0}.${'A'.repeat(85)}`],
    ['with a long signature', `${T0}.${'A'.repeat(87)}`],
    ['with a negative issued-at', `-${T0}.${'A'.repeat(86)}`],
    ['with a signature of zeros', `${T0}.${'A'.repeat(86)}`],
  ])('answers false, without throwing, to a header %s', (_what, header) => {
    expect(seals().verifier.verify(subject, auth, header)).toBe(false);
  });

  it('interoperates with nkeys: its signatures verify here and ours verify there', () => {
    // The raw key bytes are decoded here, not by nkeys: a decoding error fails this.
    const { signer, verifier } = seals();
    const header = signer.sign(subject, auth)!;
    const [issuedAt, sig] = header.split('.') as [string, string];
    const data = new TextEncoder().encode(`mailroom auth seal v1\n${subject}\n${issuedAt}\n${auth}`);
    expect(gateway.verify(data, Buffer.from(sig, 'base64url'))).toBe(true);
    const theirs = `${issuedAt}.${Buffer.from(gateway.sign(data)).toString('base64url')}`;
    expect(verifier.verify(subject, auth, theirs)).toBe(true);
  });

  it('signs nothing without a seed and verifies nothing without trusted keys', () => {
    const { signer, verifier } = seals();
    expect(verifier.sign(subject, auth)).toBeUndefined();
    expect(verifier.signs).toBe(false);
    expect(verifier.verifies).toBe(true);
    expect(signer.signs).toBe(true);
    expect(signer.verifies).toBe(false);
    expect(signer.verify(subject, auth, signer.sign(subject, auth))).toBe(false);
  });

  it('refuses bad key strings when made, and never repeats one in its message', () => {
    // One character changed in the middle (the last ones of a seed hold padding bits too).
    const corrupt = (s: string) => `${s.slice(0, 10)}${s[10] === 'A' ? 'B' : 'A'}${s.slice(11)}`;
    const seed = seedOf(gateway);
    const broken = corrupt(seed);
    expect(() => contextSeal({ seed: broken, trusted: [] })).toThrow(/^context seal: the seed is not a valid nkey seed/);
    expect(() => contextSeal({ seed: broken, trusted: [] })).not.toThrow(broken);
    expect(() => contextSeal({ seed: gateway.getPublicKey(), trusted: [] })).toThrow('context seal: the seed is not an nkey user seed (SU...)');
    // A seed pasted where a public key belongs.
    expect(() => contextSeal({ trusted: [stranger.getPublicKey(), seed] })).toThrow('context seal: trusted key 2 of 2 is not an nkey user public key (U...)');
    expect(() => contextSeal({ trusted: [seed] })).not.toThrow(seed);
    const key = gateway.getPublicKey();
    const badKey = corrupt(key);
    expect(() => contextSeal({ trusted: [badKey] })).toThrow(/^context seal: trusted key 1 of 1 is not a valid nkey \(nkeys: /);
  });
});
