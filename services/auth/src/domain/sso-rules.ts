/**
 * The rules of an SSO sign-in, as plain functions: who the provider's claims say signed in
 * (the address and name under the configuration's claim names), and whether that person may
 * sign in: an address is required, verified by the provider (`email_verified` true), in one
 * of the configuration's allowed domains.
 */
import { AppError, emailAddress } from '@mailroom/contracts';

export interface SsoIdentity {
  subject: string;
  email: string;
  name: string | null;
}

const NAME_MAX = 100;

/** The address's domain is one of `allowed` (exactly: sub-domains are other domains). */
export function domainAllowed(email: string, allowed: readonly string[]): boolean {
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
  return allowed.includes(domain);
}

/** The person the claims name, or the refusal (403) saying why they may not sign in. */
export function ssoIdentity(claims: Record<string, unknown>, mapping: { email: string; name: string }, allowedDomains: readonly string[]): SsoIdentity {
  const subject = typeof claims.sub === 'string' && claims.sub ? claims.sub : undefined;
  if (!subject) throw new AppError('forbidden', 'the identity provider did not name the person (no sub claim)');
  const parsed = emailAddress.safeParse(claims[mapping.email]);
  if (!parsed.success) throw new AppError('forbidden', `the identity provider gave no email address in the ${mapping.email} claim; ask your administrator to release it`);
  const email = parsed.data;
  // Some providers send the claim as a string.
  if (claims.email_verified !== true && claims.email_verified !== 'true') {
    throw new AppError('forbidden', `the identity provider does not say ${email} is verified (email_verified): single sign-on takes verified addresses only`);
  }
  // email_verified vouches for the `email` claim alone: another claim (upn, a custom attribute
  // people may edit at the provider) is taken only when it is that verified address.
  if (mapping.email !== 'email' && (typeof claims.email !== 'string' || claims.email.toLowerCase() !== email)) {
    throw new AppError('forbidden', `the identity provider verified no address in the ${mapping.email} claim (email_verified vouches for the email claim only, which does not say ${email})`);
  }
  if (!domainAllowed(email, allowedDomains)) {
    throw new AppError('forbidden', `${email} is not in a domain this organization's single sign-on admits (${allowedDomains.join(', ')})`);
  }
  const rawName = claims[mapping.name];
  const name = typeof rawName === 'string' ? rawName.trim().slice(0, NAME_MAX) || null : null;
  return { subject, email, name };
}
