/** The ids given to a send under a request key (see migration 20261212090000_send_requests). */
import type { Kysely } from '@mailroom/db';
import type { Tenant } from '@mailroom/contracts';
import type { MailboxDb } from './tables';

export interface SendIds {
  message_id: string;
  raw_id: string;
  thread_id: string;
}

export class SendRequestRepository {
  constructor(private readonly db: Kysely<MailboxDb>) {}

  /** Records `ids` under the key, or keeps the ones recorded first; answers those. */
  async claim(t: Tenant, key: string, ids: SendIds, now: Date): Promise<SendIds> {
    const row = await this.db
      .insertInto('send_requests')
      .values({ org_id: t.org_id, env_id: t.env_id, request_key: key, ...ids, created_at: now })
      .onConflict((oc) => oc.columns(['org_id', 'env_id', 'request_key']).doUpdateSet((eb) => ({ request_key: eb.ref('excluded.request_key') })))
      .returning(['message_id', 'raw_id', 'thread_id'])
      .executeTakeFirstOrThrow();
    return row;
  }

  /** Whether the message of an earlier try is stored. */
  async stored(inboxId: string, rawId: string): Promise<boolean> {
    const row = await this.db.selectFrom('messages').select('id').where('inbox_id', '=', inboxId).where('raw_id', '=', rawId).executeTakeFirst();
    return row !== undefined;
  }

  /** Deletes keys recorded before `before`; how many. */
  async deleteOlder(before: Date): Promise<number> {
    const result = await this.db.deleteFrom('send_requests').where('created_at', '<', before).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
