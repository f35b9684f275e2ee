/** Mail from the platform through the transactional outbox (work queue mail.system), as the orgs domain's SystemMailPort. */
import type { Outbox } from '@mailroom/runtime';
import type { SystemMailPort } from '../domain/ports';
import type { OrgsDb } from '../repo/tables';

export function systemMail(outbox: Outbox<OrgsDb>): SystemMailPort {
  return {
    queue: (tx, mail) => outbox.addWork(tx, 'mail.system', mail.id, mail),
  };
}
