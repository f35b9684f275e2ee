/**
 * Seals of auth contexts. The gateway seals the context it resolved, over the subject it
 * publishes on, the time and the exact JSON, with HMAC-SHA256 under the key of the service
 * the subject belongs to; a service honours a tenant's or an administrator's context only
 * under a seal made with its own key. A service holding a bus credential can then publish on
 * rpc subjects, but not speak for a tenant it was not asked to serve: it knows only its own
 * key, so the only service it could forge a seal for is itself.
 *
 * Each service's key is derived from the gateway's master key (serviceSealKey), so the
 * gateway holds one secret and each service one key of its own. HMAC and not a signature
 * (Ed25519 with the gateway's bus key was measured first): a signature costs about 200 us of
 * CPU per request on this machine, an HMAC 2 to 3 us, and per-service keys give the same
 * guarantee for this threat model (docs/decisions.md, "Sealed auth contexts").
 */
import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';

export interface ContextSeal {
  /** A master key was given: `sign` makes seals (the gateway). */
  readonly signs: boolean;
  /** Some key is held: a service then honours tenant and admin contexts only when sealed. */
  readonly verifies: boolean;
  /** The `Mr-Auth-Seal` value for `authJson` published on `subject`; undefined without a master key or for a subject of no service. */
  sign(subject: string, authJson: string): string | undefined;
  /** Whether `header` seals exactly `authJson` on `subject`, recently, under one of this service's keys. Never throws. */
  verify(subject: string, authJson: string, header: string | undefined): boolean;
}

export interface ContextSealOptions {
  /** The gateway's master key: it seals for each service with that service's derived key. */
  masterKey?: Buffer;
  /** This service's keys: the current one and, during a rotation, the previous. */
  keys: Buffer[];
  now?: () => number;
  /** How far issued-at may be from now, either way: clock skew between hosts and time in queues. */
  windowMs?: number;
}

const DEFAULT_WINDOW_MS = 60_000;
/** `<issuedAtMs>.<32-byte HMAC in base64url>`. */
const HEADER = /^(\d{1,15})\.([A-Za-z0-9_-]{43})$/;
/** The service a subject `[<ns>.]rpc.<service>.<entity>.<verb>` is served by (a namespace holds no dot). */
const SERVICE = /^(?:[^.]+\.)?rpc\.([^.]+)\./;

/** The key of one service, derived from the master key; written to that service's credentials. */
export function serviceSealKey(masterKey: Buffer, service: string): Buffer {
  return createHmac('sha256', masterKey).update(`mailroom auth seal key v1\n${service}`).digest();
}

export function contextSeal(opts: ContextSealOptions): ContextSeal {
  const now = opts.now ?? Date.now;
  const windowMs = opts.windowMs ?? DEFAULT_WINDOW_MS;
  for (const key of [...opts.keys, ...(opts.masterKey ? [opts.masterKey] : [])]) {
    if (key.length < 32) throw new Error('context seal: a key must have at least 32 bytes');
  }
  // Keys as KeyObjects, made once: an HMAC given raw key bytes imports them on every call
  // (35 us here, against 4 us with a KeyObject). One derivation per service the gateway calls.
  const keys = opts.keys.map((k) => createSecretKey(k));
  const derived = new Map<string, KeyObject>();
  const keyFor = (service: string, master: Buffer) => {
    let key = derived.get(service);
    if (!key) derived.set(service, (key = createSecretKey(serviceSealKey(master, service))));
    return key;
  };

  return {
    signs: opts.masterKey !== undefined,
    verifies: opts.keys.length > 0,
    sign(subject, authJson) {
      const service = SERVICE.exec(subject)?.[1];
      if (!opts.masterKey || !service) return undefined;
      const issuedAt = String(Math.floor(now()));
      return `${issuedAt}.${mac(keyFor(service, opts.masterKey), subject, issuedAt, authJson).toString('base64url')}`;
    },
    verify(subject, authJson, header) {
      if (opts.keys.length === 0 || !header) return false;
      const parts = HEADER.exec(header);
      if (!parts) return false;
      const [, issuedAt = '', seal = ''] = parts;
      if (Math.abs(now() - Number(issuedAt)) > windowMs) return false;
      const given = Buffer.from(seal, 'base64url');
      return keys.some((key) => timingSafeEqual(mac(key, subject, issuedAt, authJson), given));
    },
  };
}

/** Subjects hold no whitespace and issued-at only digits: the newlines keep the three fields apart. */
function mac(key: KeyObject, subject: string, issuedAt: string, authJson: string): Buffer {
  return createHmac('sha256', key).update(`mailroom auth seal v1\n${subject}\n${issuedAt}\n${authJson}`).digest();
}
