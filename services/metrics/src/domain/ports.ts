/** What the metrics domain needs from outside it; the composition root passes the real ones. */
import type { Transact as TransactOf } from '@mailroom/platform';
import type { RollupRepository } from '../repo/rollup.repository';
import type { MetricsTx } from '../repo/tables';

/** One transaction of this service's schema (libs/db `transactor`). */
export type Transact = TransactOf<MetricsTx>;

/** The rollup tables (repo/rollup.repository.ts). */
export type RollupStore = Pick<RollupRepository, 'markProcessed' | 'deletedAmong' | 'deleteEnvironment' | 'addCounts' | 'addLatency' | 'truncate' | 'countsByHour' | 'totals' | 'latency' | 'topInboxes' | 'hasInbox' | 'pruneProcessed' | 'organizationMessages' | 'platformMail' | 'inboxDomains' | 'rememberInboxDomains' | 'hasDomain' | 'domainOfInbox'>;
