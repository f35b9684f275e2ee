/** What single sign-on needs of an organization's identity provider (clients/sso-oidc.client.ts). */
import type { SsoTestProblem } from '@mailroom/contracts';
import type { AttemptChecks } from './ports';

/** A configuration as its provider's client uses it (the secret opened). */
export interface SsoProviderSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  scopes: readonly string[];
  /** The claim holding the address (the userinfo endpoint is asked when the ID token lacks it). */
  emailClaim: string;
}

/** What discovery found: the metadata (as far as it was read) and the signing keys, or the problem. */
export type SsoProbe =
  | { ok: true; problem: null; message: string; metadata: Record<string, unknown>; keys: number }
  | { ok: false; problem: SsoTestProblem; message: string; metadata: Record<string, unknown>; keys: 0 };

export interface SsoProviderPort {
  /** Discovery at the issuer and its key set; never throws for the provider's faults. */
  probe(issuer: string): Promise<SsoProbe>;
  /** Where to send the person, carrying the attempt's state, nonce and PKCE challenge. */
  authorizationUrl(settings: SsoProviderSettings, checks: AttemptChecks): Promise<string>;
  /** Redeems the code and answers the checked ID token's claims (with userinfo's when it lacks the address); a failed check: 400. */
  identify(settings: SsoProviderSettings, callback: { code: string; state: string; iss?: string | undefined }, checks: AttemptChecks): Promise<Record<string, unknown>>;
}

/** The domains service's verified domains (clients/sso-domains.client.ts). */
export interface SsoDomainsPort {
  /** The names among `names` that are verified now (of `orgId` when given), with the organization of each. */
  verified(names: readonly string[], orgId?: string): Promise<{ name: string; org_id: string }[]>;
}
