/**
 * The browser a sign-in attempt is bound to (login CSRF, issue 26 review): a random secret in
 * the `mailroom_login` cookie, new at every attempt's start (never one the browser brings: a
 * value planted by another site on a sibling domain must not be the one an attempt binds to,
 * review finding; so only a browser's latest attempt can finish) and read at the callback. The gateway passes it
 * to auth as `browser_binding`; auth keeps its SHA-256 with the attempt and refuses a
 * callback without the same secret. The cookie is HttpOnly, Secure and SameSite=None (the
 * SAML IdP's form posts to the ACS from another site), limited to /api/v1/auth and to an
 * attempt's 10 minutes. API clients keep it as browsers do: Set-Cookie at the start, Cookie
 * at the callback. A request body can never carry it, so a page of an attacker cannot.
 */
import type { Request, Response } from 'express';
import { browserBinding } from '@mailroom/contracts';
import { randomToken } from '@mailroom/platform';

export const BINDING_COOKIE = 'mailroom_login';
const ATTEMPT_SECONDS = 600;

/** The value of cookie `name` in a Cookie header (the first), or undefined. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

/** The browser's secret when it sent a well-formed one. */
export function boundSecret(req: Request): string | undefined {
  const value = cookieValue(req.get('cookie'), BINDING_COOKIE);
  return value !== undefined && browserBinding.safeParse(value).success ? value : undefined;
}

/** At an attempt's start: a new secret, set in the browser's cookie. */
export function bindBrowser(_req: Request, res: Response): string {
  const secret = randomToken('mrb_');
  res.cookie(BINDING_COOKIE, secret, { httpOnly: true, secure: true, sameSite: 'none', path: '/api/v1/auth', maxAge: ATTEMPT_SECONDS * 1000 });
  return secret;
}
