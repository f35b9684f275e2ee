/**
 * What mail-ingest is told about a name (domains.domain.route): whether it is served, for which
 * organizations, and where its unknown addresses go. A name is served once one of its rows was
 * verified and until that row is deleted: a verified domain whose records broke (`failed`)
 * keeps receiving, so its inboxes' mail is not refused for a DNS slip that sending already
 * stops for. But while any organization has the name verified now, only its rows count: an
 * organization whose records broke (the name moved to another owner) keeps neither its
 * inboxes' mail nor its catch-all there.
 */
import type { DomainStatus } from '@mailroom/contracts';

export interface ServedRow {
  org_id: string;
  status: DomainStatus;
  catch_all_address: string | null;
  verified_at: Date | null;
}

export function routeOf(rows: readonly ServedRow[]): { served: boolean; catch_all_address: string | null; org_ids: string[] } {
  const once = rows.filter((r) => r.verified_at !== null);
  const verified = once.filter((r) => r.status === 'verified');
  const serving = verified.length > 0 ? verified : once;
  const chosen = serving.find((r) => r.catch_all_address !== null);
  return { served: serving.length > 0, catch_all_address: chosen?.catch_all_address ?? null, org_ids: [...new Set(serving.map((r) => r.org_id))] };
}
