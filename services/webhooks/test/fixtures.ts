/** Rows the webhooks integration tests start from, written straight to the service's tables. */
import { newId } from '@mailroom/contracts';
import type { Kysely } from '@mailroom/db';
import type { Tenant } from '@mailroom/contracts';
import type { WebhooksDb } from '../src/repo/tables';

export const tenant = (): Tenant => ({ org_id: newId('organization'), env_id: newId('environment') });

/** An enabled endpoint of `t` (every event type unless `types`), created at `at`; its id. */
export async function insertEndpoint(db: Kysely<WebhooksDb>, t: Tenant, at: Date, types: string[] | null = null): Promise<string> {
  const id = newId('webhookEndpoint');
  await db
    .insertInto('endpoints')
    .values({ id, ...t, url: `https://${id}.example.com/hook`, event_types: types, description: null, secret_sealed: Buffer.from('sealed'), disabled_reason: null, disabled_at: null, created_at: at, updated_at: at })
    .execute();
  return id;
}
