/**
 * The rules of outside providers, as plain functions of what is known: what a sign-in does
 * (open a session, link the identity to the account of its address, make an account, or
 * refuse), whether a signed-in person may link an identity, and whether they may unlink a
 * provider (never the last way to sign in).
 */
import { AppError, emailAddress } from '@mailroom/contracts';
import type { OAuthIdentityRow } from '../repo/oauth.repository';
import type { UserRow } from '../repo/user.repository';
import type { ProviderIdentity } from './ports';

export type SignInOutcome =
  /** The identity is linked: a session of its account. */
  | { kind: 'sign_in'; user: UserRow }
  /**
   * Linked now to the account of its address, which the provider says is the person's. When
   * that account never proved its address (`takeOver`), whoever made it did not show they own
   * it: the password, the other links and the sessions made before go.
   */
  | { kind: 'link'; user: UserRow; takeOver: boolean }
  /** No account has the address: one is made, the address verified only if the provider says so. */
  | { kind: 'create' }
  | { kind: 'refuse'; error: AppError };

export interface SignInFacts {
  provider: string;
  identity: ProviderIdentity;
  /** The account the identity is linked to; undefined when it is linked to none, null when that account is deleted. */
  linkedAccount: UserRow | null | undefined;
  /** The live account of the identity's address, if any. */
  accountOfEmail: UserRow | undefined;
}

/** The address a provider gave, as accounts store it (lower-cased); null when it gave none or one that is not an address. */
export function providerEmail(email: string | null | undefined): string | null {
  const parsed = emailAddress.safeParse(email);
  return parsed.success ? parsed.data : null;
}

export function signInOutcome(f: SignInFacts): SignInOutcome {
  if (f.linkedAccount) return { kind: 'sign_in', user: f.linkedAccount };
  if (f.linkedAccount === null) {
    return { kind: 'refuse', error: new AppError('forbidden', `the account this ${f.provider} identity is linked to has been deleted`) };
  }
  if (f.identity.email === null) {
    return {
      kind: 'refuse',
      error: new AppError('unprocessable', `${f.provider} did not give an email address: let ${f.provider} share your address with Mailroom, or sign up with an email and password`),
    };
  }
  if (f.accountOfEmail) {
    if (f.identity.emailVerified) return { kind: 'link', user: f.accountOfEmail, takeOver: f.accountOfEmail.email_verified_at === null };
    return {
      kind: 'refuse',
      error: new AppError(
        'email_taken',
        `an account with ${f.identity.email} exists, and ${f.provider} does not say this address is verified, so it is not linked to that account: sign in with your password, then link ${f.provider} from your settings`,
      ),
    };
  }
  return { kind: 'create' };
}

export type LinkOutcome = { kind: 'linked_already' } | { kind: 'link' } | { kind: 'refuse'; error: AppError };

/** Whether the person `userId` may link the identity (`linked`: whom it is linked to now; `own`: their identity of this provider, if any). */
export function linkOutcome(provider: string, userId: string, linked: Pick<OAuthIdentityRow, 'user_id'> | undefined, own: Pick<OAuthIdentityRow, 'subject'> | undefined): LinkOutcome {
  if (linked?.user_id === userId) return { kind: 'linked_already' };
  if (linked) return { kind: 'refuse', error: new AppError('conflict', `this ${provider} account is linked to another Mailroom account; unlink it there first`) };
  if (own) {
    return {
      kind: 'refuse',
      error: new AppError('conflict', `your account is linked to another ${provider} account; unlink it first (DELETE /api/v1/user/me/oauth-providers/${provider})`),
    };
  }
  return { kind: 'link' };
}

/**
 * Why `provider` may not be unlinked from the account; undefined when it may. Another way
 * to sign in must remain: a password, or another linked provider that is configured (a link
 * to one no longer configured signs nobody in).
 */
export function unlinkRefusal(provider: string, account: { has_password: boolean }, linked: readonly string[], configured: (name: string) => boolean): AppError | undefined {
  if (!linked.includes(provider)) return AppError.notFound(`linked provider ${provider}`);
  if (account.has_password || linked.some((p) => p !== provider && configured(p))) return undefined;
  return new AppError(
    'conflict',
    `${provider} is the last way to sign in to this account: set a password first (POST /api/v1/auth/password/reset-request sends a mail to do it) or link another provider`,
  );
}
