/**
 * HTTP and RPC shapes of single sign-on per organization (spec section 4, "SSO"; issue 26).
 * An organization's owner configures identity providers (OpenID Connect or SAML 2.0); one
 * configuration is active at a time. A login starts at GET /api/v1/auth/sso/{org_identifier},
 * goes to the provider, and comes back through the web app to POST
 * /api/v1/auth/sso/oidc/callback (OIDC), or is posted by the IdP to POST
 * /api/v1/auth/sso/saml/callback (SAML; also unasked, IdP-initiated, when allowed).
 */
import { z } from 'zod';
import { idSchema } from '../ids';
import { pageOf } from '../pagination';
import { isoTimestamp } from '../time';

export const SSO_TYPES = ['oidc', 'saml'] as const;
/** Configurations an organization may keep (one active). */
export const SSO_CONFIGS_MAX = 10;
/** The roles a just-in-time member may get: ownership moves only by transfer. */
export const SSO_MEMBER_ROLES = ['admin', 'member', 'viewer'] as const;

/** A claim name of the ID token (or userinfo): letters, digits and `_`, `-`, `.`, `:`, `/` (URI-named claims). */
const claimName = z.string().regex(/^[A-Za-z0-9_.:/-]{1,200}$/, 'must be a claim name (letters, digits, _ - . : /), at most 200 characters');
/** An OAuth scope token (RFC 6749 3.3). */
const scopeToken = z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]{1,100}$/, 'must be a scope: printable characters without spaces, quotes or backslashes');
/** A domain of email addresses, lower-cased: example.com. */
const emailDomain = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/, 'must be a domain name such as example.com (no @, no wildcard)');

export const ssoClaimMapping = z.strictObject({
  /** The claim holding the person's address; `email` by default. */
  email: claimName.default('email'),
  /** The claim holding the person's name; `name` by default. */
  name: claimName.default('name'),
});

const oidcFields = {
  name: z.string().trim().min(1).max(100).optional(),
  /** The OpenID issuer; its metadata is discovered (/.well-known/openid-configuration) when the configuration is saved. */
  issuer: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL (https in production)' }).max(2048),
  client_id: z.string().min(1).max(512),
  /** Sealed at rest, never answered. */
  client_secret: z.string().min(1).max(2048),
  /** Requested at the provider; must include `openid`. Default: openid email profile. */
  scopes: z
    .array(scopeToken)
    .min(1)
    .max(20)
    .refine((s) => s.includes('openid'), 'must include openid')
    .default(['openid', 'email', 'profile']),
  claim_mapping: ssoClaimMapping.default({ email: 'email', name: 'name' }),
  /** The role of a person who becomes a member by signing in (just in time). */
  default_role: z.enum(SSO_MEMBER_ROLES).default('member'),
  /** When active and enforced: members (but the owner) sign in to the organization with SSO only. */
  enforced: z.boolean().default(false),
  /** Addresses the provider may sign in; others are refused. */
  allowed_domains: z.array(emailDomain).min(1, 'name at least one email domain whose people may sign in').max(50),
};

/** The IdP's SAML metadata (an EntityDescriptor), given inline. */
const samlMetadataXml = z.string().min(1).max(200_000, 'must be at most 200000 characters (one EntityDescriptor)');
/** Where the IdP publishes its metadata; fetched when saved, by the test route and when it is a day old. */
const samlMetadataUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL (https in production)' }).max(2048);

const samlFields = {
  name: oidcFields.name,
  idp_metadata_xml: samlMetadataXml.optional(),
  idp_metadata_url: samlMetadataUrl.optional(),
  /** The attributes holding the address and the name (the NameID when it is an emailAddress and no attribute is sent). */
  attribute_mapping: ssoClaimMapping.default({ email: 'email', name: 'name' }),
  /** Assertions must come encrypted to the platform's SP certificate (SSO_SAML_SP_CERTIFICATE). */
  want_assertions_encrypted: z.boolean().default(false),
  /** Responses the IdP sends unasked (IdP-initiated, no InResponseTo) are taken. */
  allow_idp_initiated: z.boolean().default(false),
  default_role: oidcFields.default_role,
  enforced: oidcFields.enforced,
  allowed_domains: oidcFields.allowed_domains,
};

const oneMetadata = (b: { idp_metadata_xml?: string | undefined; idp_metadata_url?: string | undefined }) => (b.idp_metadata_xml === undefined) !== (b.idp_metadata_url === undefined);
const ONE_METADATA = { path: ['idp_metadata_xml'], message: 'give the IdP metadata as idp_metadata_xml or idp_metadata_url (one of them)' };

/** POST /api/v1/org/sso: an OpenID Connect provider (`type: oidc`) or a SAML 2.0 IdP (`type: saml`). */
export const ssoConfigCreateBody = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('oidc'), ...oidcFields }),
  z.strictObject({ type: z.literal('saml'), ...samlFields }).refine(oneMetadata, ONE_METADATA),
]);

/** PATCH /api/v1/org/sso/{configId}: any field but the type; a new issuer is discovered again. */
export const ssoConfigUpdateBody = z.strictObject({
  name: oidcFields.name,
  issuer: oidcFields.issuer.optional(),
  client_id: oidcFields.client_id.optional(),
  client_secret: oidcFields.client_secret.optional(),
  scopes: z
    .array(scopeToken)
    .min(1)
    .max(20)
    .refine((s) => s.includes('openid'), 'must include openid')
    .optional(),
  claim_mapping: ssoClaimMapping.partial().optional(),
  default_role: z.enum(SSO_MEMBER_ROLES).optional(),
  enforced: z.boolean().optional(),
  allowed_domains: oidcFields.allowed_domains.optional(),
  // SAML configurations only (an OIDC configuration refuses them: 400).
  idp_metadata_xml: samlMetadataXml.optional(),
  idp_metadata_url: samlMetadataUrl.optional(),
  attribute_mapping: ssoClaimMapping.partial().optional(),
  want_assertions_encrypted: z.boolean().optional(),
  allow_idp_initiated: z.boolean().optional(),
});

export const ssoConfigId = z.object({ configId: idSchema('ssoConfig') });

export const ssoConfig = z.object({
  id: idSchema('ssoConfig'),
  org_id: idSchema('organization'),
  type: z.enum(SSO_TYPES),
  name: z.string(),
  issuer: z.string(),
  /** null for SAML. */
  client_id: z.string().nullable(),
  /** True for OIDC (the secret is kept sealed and never answered); false for SAML. */
  client_secret_set: z.boolean(),
  scopes: z.array(z.string()),
  claim_mapping: z.object({ email: z.string(), name: z.string() }),
  default_role: z.enum(SSO_MEMBER_ROLES),
  enforced: z.boolean(),
  allowed_domains: z.array(z.string()),
  /** The one configuration sign-ins use. */
  active: z.boolean(),
  created_at: isoTimestamp,
  updated_at: isoTimestamp,
  last_tested_at: isoTimestamp.nullable(),
  /** SAML configurations only: what the IdP's metadata says and what to give the IdP. */
  saml: z
    .object({
      idp_entity_id: z.string(),
      idp_sso_url: z.string(),
      idp_metadata_url: z.string().nullable(),
      /** The IdP's signing certificates (SHA-256 fingerprint, expiry). */
      certificates: z.array(z.object({ fingerprint_sha256: z.string(), not_after: isoTimestamp })),
      metadata_refreshed_at: isoTimestamp,
      attribute_mapping: z.object({ email: z.string(), name: z.string() }),
      want_assertions_encrypted: z.boolean(),
      allow_idp_initiated: z.boolean(),
      /** The SP's entity id (its metadata's URL) and Assertion Consumer Service URL, to enter at the IdP. */
      sp_entity_id: z.string(),
      acs_url: z.string(),
    })
    .optional(),
});
export type SsoConfig = z.infer<typeof ssoConfig>;
/** Never more than one page (SSO_CONFIGS_MAX). */
export const ssoConfigList = pageOf(ssoConfig);

/** What a test found wrong: the provider did not answer (or is at a non-public address), is not an OpenID issuer or its SAML metadata is not usable, names another issuer or IdP, or has no usable keys or certificate valid now. */
export const SSO_TEST_PROBLEMS = ['unreachable', 'blocked_destination', 'not_openid_issuer', 'issuer_mismatch', 'no_jwks', 'not_saml_metadata', 'no_valid_certificate'] as const;
export type SsoTestProblem = (typeof SSO_TEST_PROBLEMS)[number];

/** POST /api/v1/org/sso/{configId}/test: a round trip to the provider (OIDC: discovery, then its keys; SAML: metadata and certificates, `authorization_endpoint` the SSO URL, `jwks_uri` the metadata URL, `keys` the certificates valid now). */
export const ssoTestResult = z.object({
  ok: z.boolean(),
  /** null when ok. */
  problem: z.enum(SSO_TEST_PROBLEMS).nullable(),
  message: z.string(),
  issuer: z.string(),
  authorization_endpoint: z.string().nullable(),
  token_endpoint: z.string().nullable(),
  jwks_uri: z.string().nullable(),
  /** Signing keys the provider publishes. */
  keys: z.number().int().nonnegative(),
  tested_at: isoTimestamp,
});
export type SsoTestResult = z.infer<typeof ssoTestResult>;

/** The organization's id, a verified email domain of it, or an address there. */
export const ssoLoginParam = z.object({ org_identifier: z.string().min(1).max(253) });

/** The state of an SSO attempt: `mrs_` and 43 base64url characters (32 random bytes). */
export const ssoState = z.string().regex(/^mrs_[A-Za-z0-9_-]{43}$/, 'must be the state of an SSO attempt this API started (mrs_...)');

export const ssoAuthorization = z.object({
  /** Where to send the person (the provider's authorization endpoint, with state, nonce and PKCE challenge). */
  authorization_url: z.url(),
  state: ssoState,
  /** The attempt works once, until then (10 minutes). */
  expires_at: isoTimestamp,
});
export type SsoAuthorization = z.infer<typeof ssoAuthorization>;

/** What the provider's redirect to the web app carried (`code`, `state`, `iss` when sent), posted to the API. */
export const ssoOidcCallbackBody = z.strictObject({
  code: z.string().min(1).max(2048),
  state: ssoState,
  iss: z.url().max(2048).optional(),
});

/** For auth (services only): which of these names are verified domains, and of which organization (one at most: a name is verified by one organization). */
export const verifiedDomainsRequest = z.object({ names: z.array(z.string().min(1).max(253)).min(1).max(50), org_id: idSchema('organization').optional() });
export const verifiedDomains = z.object({ data: z.array(z.object({ name: z.string(), org_id: idSchema('organization') })) });

/** For auth (services only): make the person a member of the organization with this role; a member already keeps theirs. */
export const ssoMemberRequest = z.object({ org_id: idSchema('organization'), user_id: idSchema('user'), role: z.enum(SSO_MEMBER_ROLES) });

/**
 * POST /api/v1/auth/sso/saml/callback (the SP's Assertion Consumer Service), form-encoded as
 * the HTTP-POST binding sends it: the IdP's Response (base64) and the RelayState (the
 * attempt's state when this API started the login; anything or nothing when the IdP did).
 */
export const ssoSamlCallbackBody = z.strictObject({
  SAMLResponse: z.string().min(1).max(1_000_000, 'must be at most 1000000 characters').regex(/^[A-Za-z0-9+/=\s]+$/, 'must be base64 (the HTTP-POST binding)'),
  RelayState: z.string().max(80, 'must be at most 80 bytes (SAML bindings 3.5.3)').optional(),
});

/** GET /api/v1/auth/sso/saml/metadata/{org_id}. */
export const ssoSamlMetadataParam = z.object({ org_id: idSchema('organization') });

/** The SP metadata, served as application/samlmetadata+xml. */
export const ssoSamlMetadata = z.object({
  content_type: z.literal('application/samlmetadata+xml; charset=utf-8'),
  text: z.string(),
});
