/**
 * TOTP (RFC 6238) as accounts use it, on the otpauth library: HMAC-SHA-1, 6 digits, 30-second
 * steps (what every authenticator app reads from an otpauth:// URI), a code accepted for the
 * step of now or one either side (clock drift, typing time), and each step accepted once.
 */
import { Secret, TOTP } from 'otpauth';

export const TOTP_PARAMS = { algorithm: 'SHA1', digits: 6, period: 30 } as const;
/** Steps either side of now's whose code is accepted. */
export const TOTP_WINDOW = 1;
/** 160 bits: the key length RFC 4226 recommends for HMAC-SHA-1. */
const SECRET_BYTES = 20;

/** A new random secret, in base32. */
export function newTotpSecret(): string {
  return new Secret({ size: SECRET_BYTES }).base32;
}

/** The key URI an authenticator app reads: otpauth://totp/<issuer>:<account>?secret=...&issuer=... */
export function otpauthUri(secretBase32: string, account: string, issuer: string): string {
  return new TOTP({ issuer, label: account, secret: Secret.fromBase32(secretBase32), ...TOTP_PARAMS }).toString();
}

/** The time step `code` is the code of, among now's and its neighbours'; undefined when it is none of them. */
export function stepOf(secretBase32: string, code: string, now: Date): number | undefined {
  const timestamp = now.getTime();
  const delta = TOTP.validate({ token: code, secret: Secret.fromBase32(secretBase32), ...TOTP_PARAMS, timestamp, window: TOTP_WINDOW });
  return delta === null ? undefined : TOTP.counter({ period: TOTP_PARAMS.period, timestamp }) + delta;
}

/**
 * Whether a code of `step` may still be accepted after `lastUsed`: a step is accepted once,
 * and none older than the last accepted (RFC 6238, 5.2), so a code seen over a shoulder or
 * in a log is worth nothing once its owner has used it or a later one.
 */
export function stepUnused(step: number, lastUsed: number | null): boolean {
  return lastUsed === null || step > lastUsed;
}
