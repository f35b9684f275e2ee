/** How an endpoint's requests in flight are shared among the live webhooks instances (the dispatcher asks). */
import { createHash } from 'node:crypto';

/** An instance's place for an endpoint in the order the endpoint's slots are dealt out: the same on every instance. */
function placeOf(owner: string, endpointId: string): string {
  return `${createHash('sha256').update(owner).update('\0').update(endpointId).digest('hex')}${owner}`;
}

/**
 * How many of an endpoint's `perEndpoint` requests in flight one instance of `members`
 * (the live instances) may run: the slots are dealt out in an order every instance computes
 * alike (a hash of instance and endpoint), so together they keep the bound. Past
 * `perEndpoint` instances, an endpoint's slots are with `perEndpoint` of them, one each, and
 * the others have none (which ones differs from endpoint to endpoint).
 */
export function slotShare(members: readonly string[], me: string, endpointId: string, perEndpoint: number): number {
  const all = members.includes(me) ? members : [...members, me];
  const n = all.length;
  if (n <= 1) return perEndpoint;
  const extra = perEndpoint % n;
  const base = (perEndpoint - extra) / n;
  if (extra === 0) return base;
  const mine = placeOf(me, endpointId);
  let ahead = 0;
  for (const m of all) if (m !== me && placeOf(m, endpointId) > mine) ahead++;
  return base + (ahead < extra ? 1 : 0);
}
