/**
 * Prefixed, time-sortable identifiers: `<prefix>_<26 chars>`, the opaque part a ULID
 * (48-bit millisecond time + 80 random bits, Crockford base32, lower case) so that
 * sorting ids sorts by creation time.
 */
import { z } from 'zod';

export const ID_PREFIXES = {
  event: 'evt',
  organization: 'org',
  environment: 'env',
  message: 'msg',
  thread: 'thr',
  inbox: 'inb',
  domain: 'dom',
  webhookEndpoint: 'whe',
  // Ours, in the same style.
  user: 'usr',
  session: 'ses',
  apiKey: 'key',
  adminKey: 'adk',
  member: 'mem',
  request: 'req',
  delivery: 'wdl',
  recovery: 'wrc',
  attachment: 'att',
  label: 'lbl',
  signingKey: 'sgk',
  raw: 'raw',
  outboxEvent: 'obx',
  ownershipTransfer: 'otr',
  invitation: 'inv',
  upgradeRequest: 'upr',
  systemMail: 'sml',
  oneTimeCode: 'otc',
  // Single sign-on (issue 26).
  ssoConfig: 'sso',
  // The audit log (issue 28).
  auditEntry: 'aud',
  // Organization exports (issue 28, part 4).
  export: 'exp',
  // Samples of the platform's health (issue 28).
  healthSample: 'hsm',
  alertTransition: 'alt',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;
export type IdPrefix = (typeof ID_PREFIXES)[IdKind];

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const BODY = /^[0-9abcdefghjkmnpqrstvwxyz]{26}$/;

/** Encodes `ms` (48 bits) and 10 random bytes as 26 Crockford base32 characters. */
export function ulid(ms: number = Date.now(), random: Uint8Array = randomBytes(10)): string {
  let out = '';
  let t = ms;
  const time: string[] = [];
  for (let i = 0; i < 10; i++) {
    time.push(ALPHABET[t % 32]!);
    t = Math.floor(t / 32);
  }
  out += time.reverse().join('');
  // 80 random bits -> 16 characters of 5 bits.
  let acc = 0;
  let bits = 0;
  for (const byte of random) {
    acc = (acc << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(acc >> bits) & 31]!;
    }
    acc &= (1 << bits) - 1;
  }
  return out;
}

// Random bytes are drawn from a pool refilled 4 KiB at a time: one system call per ~400 ids.
const POOL_SIZE = 4096;
let pool = new Uint8Array(0);
let poolOffset = 0;

/** n cryptographically random bytes (n <= 4096). */
export function randomBytes(n: number): Uint8Array {
  if (poolOffset + n > pool.length) {
    pool = new Uint8Array(POOL_SIZE);
    globalThis.crypto.getRandomValues(pool);
    poolOffset = 0;
  }
  const out = pool.slice(poolOffset, poolOffset + n);
  poolOffset += n;
  return out;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** n random bytes as lower-case hex. */
export function randomHex(n: number): string {
  let out = '';
  for (const b of randomBytes(n)) out += HEX[b];
  return out;
}

export function newId<K extends IdKind>(kind: K, ms?: number): `${(typeof ID_PREFIXES)[K]}_${string}` {
  return `${ID_PREFIXES[kind]}_${ulid(ms)}` as `${(typeof ID_PREFIXES)[K]}_${string}`;
}

/**
 * A source of ids of one kind that sort in the order they were made: within one
 * millisecond (or when the clock steps back) the next id keeps the previous one's time and
 * adds one to its random part, as ULID's monotonic mode does. For ids that order rows, where
 * two made in the same millisecond must not sort at random.
 */
export function monotonicIds<K extends IdKind>(kind: K): (ms?: number) => `${(typeof ID_PREFIXES)[K]}_${string}` {
  let lastMs = -1;
  let last: Uint8Array = new Uint8Array(10);
  return (ms = Date.now()) => {
    if (ms > lastMs) {
      lastMs = ms;
      last = randomBytes(10);
    } else {
      // Big-endian increment; all 80 bits set (a chance of 2^-80 a millisecond) moves on to the next millisecond.
      let i = last.length - 1;
      while (i >= 0 && last[i] === 255) last[i--] = 0;
      if (i >= 0) last[i]!++;
      else lastMs++;
    }
    return `${ID_PREFIXES[kind]}_${ulid(lastMs, last)}` as `${(typeof ID_PREFIXES)[K]}_${string}`;
  };
}

export function isId(kind: IdKind, value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const prefix = ID_PREFIXES[kind];
  return value.length === prefix.length + 27 && value.startsWith(`${prefix}_`) && BODY.test(value.slice(prefix.length + 1));
}

/** The creation time encoded in an id, or undefined when it is not one of ours. */
export function idTime(value: string): Date | undefined {
  const body = value.slice(value.indexOf('_') + 1);
  if (!BODY.test(body)) return undefined;
  let ms = 0;
  for (const ch of body.slice(0, 10)) ms = ms * 32 + ALPHABET.indexOf(ch);
  return new Date(ms);
}

export function idSchema(kind: IdKind) {
  const prefix = ID_PREFIXES[kind];
  return z.string().refine((v) => isId(kind, v), { message: `must be an id starting with ${prefix}_` });
}
