/** What the mailbox domain needs from outside it, as plain interfaces; the composition root passes the real ones. */
import type { EventSink as EventSinkOf, Transact as TransactOf } from '@mailroom/platform';
import type { MailboxTx } from '../repo/tables';

/** One transaction of this service's schema (libs/db `transactor`). */
export type Transact = TransactOf<MailboxTx>;
/** Events and work items written with a transaction, published after it (libs/runtime `Outbox`). */
export type EventSink = EventSinkOf<MailboxTx>;
