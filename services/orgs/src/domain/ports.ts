/** What the orgs domain needs from outside it, as plain interfaces; the composition root passes the real ones. */
import type { Transact as TransactOf } from '@mailroom/platform';
import type { OrgsTx } from '../repo/tables';

/** One transaction of this service's schema (libs/db `transactor`). */
export type Transact = TransactOf<OrgsTx>;
