/** What the mail-send domain needs from outside it, as plain interfaces; the composition root passes the real ones. */
import type { EventSink as EventSinkOf, Transact as TransactOf } from '@mailroom/platform';
import type { SendTx } from '../repo/tables';

/** One transaction of this service's schema (libs/db `transactor`). */
export type Transact = TransactOf<SendTx>;
/** Events and work items written with a transaction, published after it (libs/runtime `Outbox`). */
export type EventSink = EventSinkOf<SendTx>;

/** GET of a URL's body as text, with a timeout and a size bound (src/clients/fetch-text.ts). */
export type FetchText = (url: string, maxBytes: number) => Promise<string>;
