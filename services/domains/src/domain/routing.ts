/**
 * What mail-ingest is told about a name (domains.domain.route). A name is served once one of
 * its rows was verified and until that row is deleted: a verified domain whose records broke
 * (`failed`) keeps receiving, so its inboxes' mail is not refused for a DNS slip that sending
 * already stops for. Unknown addresses go to the catch-all of a verified row before a failed
 * one's (two organizations can hold one name only while one of them has it failed).
 */
import type { DomainStatus } from '@mailroom/contracts';

export interface ServedRow {
  status: DomainStatus;
  catch_all_address: string | null;
  verified_at: Date | null;
}

export function routeOf(rows: readonly ServedRow[]): { served: boolean; catch_all_address: string | null } {
  const served = rows.filter((r) => r.verified_at !== null);
  const withCatchAll = served.filter((r) => r.catch_all_address !== null);
  const chosen = withCatchAll.find((r) => r.status === 'verified') ?? withCatchAll[0];
  return { served: served.length > 0, catch_all_address: chosen?.catch_all_address ?? null };
}
