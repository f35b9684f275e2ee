/**
 * Seals of auth contexts. The gateway signs the context it resolved, with the Ed25519 key of
 * its NATS identity (an nkey), over the subject it publishes on, the time and the exact JSON;
 * a service honours a tenant's or an administrator's context only under a seal made by a
 * key it trusts. A service holding a bus credential can then publish on rpc subjects, but
 * not speak for a tenant it was not asked to serve.
 *
 * Signing and verifying go through node:crypto (OpenSSL): nkeys' own sign/verify is pure JS
 * (tweetnacl) and about 50 times slower. nkeys only checks the key strings (prefix, checksum).
 */
import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { fromPublic, fromSeed } from '@nats-io/nkeys';

export interface ContextSeal {
  /** A seed was given: `sign` makes seals. */
  readonly signs: boolean;
  /** Some key is trusted: a service then honours tenant and admin contexts only when sealed. */
  readonly verifies: boolean;
  /** The `Mr-Auth-Seal` value for `authJson` published on `subject`; undefined without a seed. */
  sign(subject: string, authJson: string): string | undefined;
  /** Whether `header` seals exactly `authJson` on `subject`, recently, by a trusted key. Never throws. */
  verify(subject: string, authJson: string, header: string | undefined): boolean;
}

export interface ContextSealOptions {
  /** The signer's nkey seed ('SU...'): the gateway's bus key. */
  seed?: string;
  /** Public nkeys ('U...') whose seals are honoured: the gateway's (two while it rotates). */
  trusted: string[];
  now?: () => number;
  /** How far issued-at may be from now, either way: clock skew between hosts and time in queues. */
  windowMs?: number;
}

const DEFAULT_WINDOW_MS = 60_000;
/** Names what is signed, so that a seal is never also a valid signature of something else made with the bus key. */
const DOMAIN = 'mailroom auth seal v1\n';
/** `<issuedAtMs>.<64-byte signature in base64url>`. */
const HEADER = /^(\d{1,15})\.([A-Za-z0-9_-]{86})$/;
// DER wrappings of a raw Ed25519 key (RFC 8410): PKCS#8 around the 32-byte seed, SPKI around the public key.
const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_ED25519 = Buffer.from('302a300506032b6570032100', 'hex');

export function contextSeal(opts: ContextSealOptions): ContextSeal {
  const now = opts.now ?? Date.now;
  const windowMs = opts.windowMs ?? DEFAULT_WINDOW_MS;
  // Converted once: a KeyObject per call would cost more than the signature.
  const privateKey = opts.seed === undefined ? undefined : userSeed(opts.seed);
  const trusted = opts.trusted.map((key, i) => userPublicKey(key, `trusted key ${i + 1} of ${opts.trusted.length}`));

  return {
    signs: privateKey !== undefined,
    verifies: trusted.length > 0,
    sign(subject, authJson) {
      if (!privateKey) return undefined;
      const issuedAt = String(Math.floor(now()));
      return `${issuedAt}.${sign(null, signed(subject, issuedAt, authJson), privateKey).toString('base64url')}`;
    },
    verify(subject, authJson, header) {
      if (trusted.length === 0 || !header) return false;
      const parts = HEADER.exec(header);
      if (!parts) return false;
      const [, issuedAt = '', signature = ''] = parts;
      if (Math.abs(now() - Number(issuedAt)) > windowMs) return false;
      const sig = Buffer.from(signature, 'base64url');
      const data = signed(subject, issuedAt, authJson);
      return trusted.some((key) => {
        try {
          return verify(null, data, key, sig);
        } catch {
          return false;
        }
      });
    },
  };
}

/** Subjects hold no whitespace and issued-at only digits: the newlines keep the three fields apart. */
function signed(subject: string, issuedAt: string, authJson: string): Buffer {
  return Buffer.from(`${DOMAIN}${subject}\n${issuedAt}\n${authJson}`);
}

function userSeed(seed: string): KeyObject {
  // The seed itself is never part of a message.
  if (!seed.startsWith('SU')) throw new Error('context seal: the seed is not an nkey user seed (SU...)');
  try {
    fromSeed(new TextEncoder().encode(seed));
  } catch (err) {
    throw new Error(`context seal: the seed is not a valid nkey seed (${(err as Error).message})`, { cause: err });
  }
  // An nkey seed is two prefix bytes, the 32-byte Ed25519 seed and a checksum.
  const raw = base32(seed).subarray(2, 34);
  return createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, raw]), format: 'der', type: 'pkcs8' });
}

/** `which` names the key by its place: a seed pasted where a public key belongs must not reach a log. */
function userPublicKey(key: string, which: string): KeyObject {
  if (!key.startsWith('U')) throw new Error(`context seal: ${which} is not an nkey user public key (U...)`);
  try {
    fromPublic(key);
  } catch (err) {
    throw new Error(`context seal: ${which} is not a valid nkey (${(err as Error).message})`, { cause: err });
  }
  // An nkey public key is one prefix byte, the 32-byte Ed25519 key and a checksum.
  const raw = base32(key).subarray(1, 33);
  return createPublicKey({ key: Buffer.concat([SPKI_ED25519, raw]), format: 'der', type: 'spki' });
}

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/**
 * RFC 4648 base32 without padding, as nkeys are written. nkeys' typed API gives the key
 * strings only, not their bytes; it has checked the alphabet and checksum before this runs.
 */
function base32(text: string): Buffer {
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const c of text) {
    value = ((value << 5) | BASE32.indexOf(c)) & 0xfff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out.push((value >>> bits) & 0xff);
    }
  }
  return Buffer.from(out);
}
