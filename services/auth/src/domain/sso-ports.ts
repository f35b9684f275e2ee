/** What single sign-on needs of an organization's identity provider (clients/sso-oidc.client.ts). */
import type { SsoTestProblem } from '@mailroom/contracts';
import type { AttemptChecks } from './ports';
import type { SamlAssertionFacts } from './saml-rules';

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

/** An IdP's metadata as read (clients/saml-metadata.ts). */
export interface SamlIdpMetadata {
  entityId: string;
  ssoUrl: string;
  /** Base64 DER. */
  certificates: string[];
}

export type SamlMetadataLoad = { ok: true; xml: string; metadata: SamlIdpMetadata } | { ok: false; problem: Extract<SsoTestProblem, 'unreachable' | 'blocked_destination' | 'not_saml_metadata'>; message: string };

/** What SAML configurations need of the outside (clients/sso-saml.client.ts). */
export interface SamlMetadataPort {
  /** Reads metadata given inline, or fetches it first (SSRF-guarded); never throws for the IdP's faults. */
  loadMetadata(source: { xml?: string | undefined; url?: string | undefined }): Promise<SamlMetadataLoad>;
  /** Whether the platform has an SP key pair, so assertions may be encrypted to it. */
  readonly decrypts: boolean;
}

/** Where this platform's SP is, per organization (config: SSO_SAML_BASE_URL). */
export interface SamlSp {
  entityId(orgId: string): string;
  acsUrl: string;
}

/** A SAML configuration as the SAML client uses it. */
export interface SamlSettings {
  spEntityId: string;
  acsUrl: string;
  idpEntityId: string;
  ssoUrl: string;
  /** Base64 DER. */
  certificates: readonly string[];
}

/** The SAML login's outside half (clients/sso-saml.client.ts). */
export interface SamlLoginPort {
  /** The IdP's SSO URL carrying the AuthnRequest `requestId` and the RelayState. */
  authorizeUrl(s: SamlSettings, requestId: string, relayState: string): Promise<string>;
  /** The response's signature, decryption and audience checked; the signed assertion's facts. A failed check: 400. */
  verify(s: SamlSettings, samlResponse: string): Promise<SamlAssertionFacts>;
  /** What the response says of itself before any check: its Issuer, and whether its assertion is encrypted. */
  peek(samlResponse: string): { issuer: string | undefined; encrypted: boolean };
  /** The SP metadata of an organization. */
  metadata(spEntityId: string, acsUrl: string): string;
}
