/**
 * Recovery codes: ten per account, each working once in place of an authenticator code.
 * 16 characters of Crockford base32 (80 random bits), shown as xxxx-xxxx-xxxx-xxxx and taken
 * in any case, with or without dashes. Stored as SHA-256 over the account's id and the code:
 * at 80 bits a fast hash cannot be searched, and the id makes each account's hashes its own.
 */
import { randomBytes } from 'node:crypto';
import { RECOVERY_CODE_COUNT, RECOVERY_CODE_PATTERN } from '@mailroom/contracts';
import { sha256 } from '@mailroom/platform';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const LENGTH = 16;

/** One new code; each byte gives 5 uniform bits (256 is a multiple of 32). */
function newCode(): string {
  const chars = [...randomBytes(LENGTH)].map((b) => ALPHABET[b & 31]!).join('');
  return chars.match(/.{4}/g)!.join('-');
}

/** A new set of codes, all different. */
export function newRecoveryCodes(): string[] {
  const codes = new Set<string>();
  while (codes.size < RECOVERY_CODE_COUNT) codes.add(newCode());
  return [...codes];
}

/** Whether `code` has the shape of a recovery code (not whether it is one). */
export function looksLikeRecoveryCode(code: string): boolean {
  return RECOVERY_CODE_PATTERN.test(code);
}

/** What is hashed: lower case, no dashes. */
export function normalizeRecoveryCode(code: string): string {
  return code.toLowerCase().replace(/-/g, '');
}

export function recoveryCodeHash(userId: string, code: string): Buffer {
  return sha256(`${userId}:${normalizeRecoveryCode(code)}`);
}
