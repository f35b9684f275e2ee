/**
 * HTTP and RPC shapes of signing in with an outside provider (OAuth 2 / OpenID Connect) and
 * of the providers linked to a person's account. A sign-in or a link is an attempt: its
 * authorization URL is asked for, the person goes to the provider, and the client sends back
 * what the provider's redirect carried (`code`, `state`, and `iss` when the provider sends it).
 */
import { z } from 'zod';
import { pageOf } from '../pagination';
import { isoTimestamp } from '../time';

/** `google`, `github`, or the name of an OpenID Connect provider of the configuration. */
export const oauthProviderName = z.string().regex(/^[a-z][a-z0-9-]{0,31}$/, 'must be a provider name: lower-case letters, digits and -, starting with a letter (google, github, or one configured)');
export const oauthProviderParam = z.object({ provider: oauthProviderName });

/** The state of an attempt: `mro_` and 43 base64url characters (32 random bytes). */
export const oauthState = z.string().regex(/^mro_[A-Za-z0-9_-]{43}$/, 'must be the state of an attempt this API started (mro_...)');

/** Where to send the person, and the state the provider's redirect will carry back. */
export const oauthAuthorization = z.object({
  authorization_url: z.url(),
  state: oauthState,
  /** The attempt works once, until then (10 minutes). */
  expires_at: isoTimestamp,
});
export type OAuthAuthorization = z.infer<typeof oauthAuthorization>;

/** What the provider's redirect carried: its query parameters `code`, `state` and, when sent, `iss`. */
/**
 * The per-browser secret of a sign-in attempt (outside provider or SSO): the gateway keeps it
 * in the browser's `mailroom_login` cookie (set at the start, read at the callback, never in a
 * body) and passes it to auth, which keeps its SHA-256 with the attempt: a callback from
 * another browser (login CSRF: a victim made to finish the attacker's attempt) is refused.
 */
export const browserBinding = z.string().regex(/^mrb_[A-Za-z0-9_-]{43}$/);
export const browserBound = z.object({ browser_binding: browserBinding.optional() });

export const oauthCallbackBody = z.strictObject({
  code: z.string().min(1).max(2048),
  state: oauthState,
  iss: z.url().max(2048).optional(),
});

/** A provider linked to the signed-in person's account. */
export const oauthLink = z.object({
  provider: oauthProviderName,
  /** The address the provider last gave for the person; null when it gave none. */
  email: z.string().nullable(),
  linked_at: isoTimestamp,
  /** The last sign-in with it; null when never used to sign in since linked. */
  last_used_at: isoTimestamp.nullable(),
});
export type OAuthLink = z.infer<typeof oauthLink>;
/** Never more than one page: one link per provider. */
export const oauthLinkList = pageOf(oauthLink);
