/**
 * What one claim asks PostgreSQL for: per endpoint known here, enough to keep its slots
 * busy between claims; and, when something may have made work due anywhere (`discover`),
 * endpoints not known here yet, with the room left.
 */
import type { ClaimRequest } from '../repo/delivery.repository';
import type { EndpointSlots } from './endpoint-slots';

export type ClaimPlan = Pick<ClaimRequest, 'endpoints' | 'discover'>;

/**
 * `room`: deliveries this instance may still hold; `full`: the most one endpoint holds from
 * claims. An endpoint is topped up once it is down to half of that (a claim costs a round
 * trip whatever its size) and not at all once a claim found nothing more due for it
 * (`drained`), unless this claim discovers. Undefined: nothing to ask.
 */
export function planClaim(endpoints: ReadonlyMap<string, Pick<EndpointSlots, 'drained' | 'fromClaims'>>, room: number, full: number, discover: boolean): ClaimPlan | undefined {
  const asks: ClaimPlan['endpoints'] = [];
  for (const [id, slots] of endpoints) {
    // Only claimed deliveries count: new work handed over does not keep older due ones waiting.
    const held = slots.fromClaims;
    if (room <= 0 || (!discover && (slots.drained || held > full / 2))) continue;
    const want = Math.min(full - held, room);
    if (want <= 0) continue;
    asks.push({ id, room: want });
    room -= want;
  }
  const search = discover && room > 0 ? { endpoints: Math.max(1, Math.floor(room / full)), room: Math.min(full, room), exclude: [...endpoints.keys()] } : undefined;
  if (asks.length === 0 && !search) return undefined;
  return { endpoints: asks, discover: search };
}
