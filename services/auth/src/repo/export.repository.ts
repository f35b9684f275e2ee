/**
 * An organization's rows for its export (issue 28, part 4), in id order from `after`: one
 * query per resource, every one filtered on the organization. Secrets stay out: API keys
 * without their hash, SSO configurations without their sealed client secret.
 */
import type { Executor, Kysely } from '@mailroom/db';
import type { ExportPageQuery } from '@mailroom/contracts';
import type { AuthDb } from './tables';

export class AuthExportRepository {
  constructor(private readonly db: Kysely<AuthDb>) {}

  apiKeys({ orgId, after, limit }: ExportPageQuery, ex: Executor<AuthDb> = this.db) {
    let q = ex
      .selectFrom('api_keys')
      .select(['id', 'org_id', 'env_id', 'name', 'key_prefix', 'scope', 'permissions', 'created_by', 'created_at', 'last_used_at', 'revoked_at'])
      .where('org_id', '=', orgId);
    if (after) q = q.where('id', '>', after);
    return q.orderBy('id').limit(limit).execute();
  }

  ssoConfigurations({ orgId, after, limit }: ExportPageQuery, ex: Executor<AuthDb> = this.db) {
    let q = ex
      .selectFrom('sso_configurations')
      .select(['id', 'org_id', 'type', 'name', 'issuer', 'client_id', 'scopes', 'email_claim', 'name_claim', 'default_role', 'enforced', 'allowed_domains', 'active', 'created_at', 'updated_at', 'last_tested_at', 'saml_metadata_url', 'saml_sso_url', 'saml_certificates', 'want_assertions_encrypted', 'allow_idp_initiated'])
      .where('org_id', '=', orgId);
    if (after) q = q.where('id', '>', after);
    return q.orderBy('id').limit(limit).execute();
  }
}
