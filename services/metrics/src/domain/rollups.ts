/**
 * Counting events into the rollups, exactly once each: in one transaction the batch's event
 * ids are recorded (those already there were counted before: a redelivery, or a second
 * instance that got the same message) and only the new ones are added to their rows. A
 * failed transaction counts none of them, and the messages are redelivered.
 *
 * A deleted environment's rollups are deleted (`internal.orgs.environment.deleted`), and its
 * events are not counted afterwards: one still in flight, or the stream's in a replay, would
 * bring its rows back. The deletion records the environment first, which waits for the
 * countings in flight (libs/runtime deleted-environments.ts), then deletes the rows.
 *
 * Each event also counts in its inbox's custom domain: inboxes not seen before are looked up
 * before the transaction (inbox-domains.ts), and what is known is what counts.
 */
import type { EventEnvelope, Fact } from '@mailroom/contracts';
import type { EnvironmentTombstones } from '@mailroom/platform';
import type { MetricsTx } from '../repo/tables';
import type { RollupStore, Transact } from './ports';
import { domainLookup, inboxesOf, inboxKey, lookUpDomains, type InboxDomain, type InboxDomainsPort } from './inbox-domains';
import { aggregate } from './rollup';

export class Rollups {
  constructor(private readonly deps: { transact: Transact; store: RollupStore; tombstones: EnvironmentTombstones<MetricsTx>; domains: InboxDomainsPort }) {}

  /** Counts the events not counted before (but none of a deleted environment); answers how many were new. */
  async record(events: readonly EventEnvelope[]): Promise<number> {
    if (!events.length) return 0;
    // In id order: two instances recording overlapping batches take the ids' locks in one order.
    const unique = [...new Map(events.map((e) => [e.id, e])).values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const domainOf = domainLookup(await this.inboxDomains(unique));
    return this.deps.transact(async (tx) => {
      const fresh = await this.deps.store.markProcessed(
        unique.map((e) => e.id),
        tx,
      );
      if (!fresh.size) return 0;
      const counted = unique.filter((e) => fresh.has(e.id));
      const deleted = await this.deps.store.deletedAmong([...new Set(counted.map((e) => e.env_id))].sort(), tx);
      const rows = aggregate(
        counted.filter((e) => !deleted.has(e.env_id)),
        domainOf,
      );
      await this.deps.store.addCounts(
        rows.map(({ latency: _latency, ...counts }) => counts),
        tx,
      );
      await this.deps.store.addLatency(
        rows.flatMap((r) => [...r.latency.entries()].sort(([a], [b]) => a - b).map(([bucket, deliveries]) => ({ org_id: r.org_id, env_id: r.env_id, hour: r.hour, inbox_id: r.inbox_id, bucket, deliveries }))),
        tx,
      );
      return fresh.size;
    });
  }

  /**
   * The domains of the events' inboxes: those known, and those not known yet asked of their
   * owners and kept (but not of a deleted environment: its events count nothing).
   */
  private async inboxDomains(events: readonly EventEnvelope[]): Promise<InboxDomain[]> {
    const inboxes = inboxesOf(events);
    const known = await this.deps.store.inboxDomains(inboxes);
    if (known.length === inboxes.length) return known;
    const have = new Set(known.map(inboxKey));
    const unknown = inboxes.filter((i) => !have.has(inboxKey(i)));
    const deleted = await this.deps.store.deletedAmong([...new Set(unknown.map((i) => i.env_id))].sort());
    const ask = unknown.filter((i) => !deleted.has(i.env_id));
    if (!ask.length) return known;
    await this.deps.store.rememberInboxDomains(await lookUpDomains(ask, this.deps.domains));
    // Read back: of two instances learning an inbox at once, the first one's answer stays.
    return [...known, ...(await this.deps.store.inboxDomains(ask))];
  }

  /** The environment's rollups deleted, and its events not counted from now on; idempotent (`removed` 0 the second time). */
  async environmentDeleted(fact: Fact<'internal.orgs.environment.deleted'>): Promise<{ removed: number }> {
    return this.deps.transact(async (tx) => {
      await this.deps.tombstones.record(tx, { org_id: fact.org_id, env_id: fact.env_id, deleted_at: new Date(fact.deleted_at) });
      return { removed: await this.deps.store.deleteEnvironment({ org_id: fact.org_id, env_id: fact.env_id }, tx) };
    });
  }
}
