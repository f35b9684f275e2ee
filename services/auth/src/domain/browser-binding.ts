/**
 * A sign-in attempt is finished by the browser that started it (login CSRF): the attempt
 * keeps the SHA-256 of the secret the gateway put in that browser's cookie, and a callback
 * must bring the same secret. An attempt no browser started (null) needs none.
 */
import { constantTimeEqual, sha256 } from '@mailroom/platform';

export const OTHER_BROWSER = 'this sign-in attempt was started in another browser (or its mailroom_login cookie was not sent back): finish it where it started, keeping the cookie the start set';

/** What an attempt keeps of the starting browser's secret. */
export function bindingHash(secret: string | undefined): Buffer | null {
  return secret === undefined ? null : sha256(secret);
}

/** Whether the callback's secret is the starting browser's. */
export function sameBrowser(stored: Buffer | null, secret: string | undefined): boolean {
  if (stored === null) return true;
  return secret !== undefined && constantTimeEqual(sha256(secret), stored);
}
