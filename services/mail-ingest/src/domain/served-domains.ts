/**
 * Which domains the SMTP edge takes mail for. MAIL_DOMAIN and MAIL_EXTRA_DOMAINS always, with
 * no catch-all; a custom domain when the domains service says it serves it (a domain verified
 * once and not deleted, domains.domain.route), with its catch-all address. Answers are kept
 * for a while, and what was kept about a name is forgotten when a DOMAINS_FACTS fact says the
 * domain changed (verified, unverified, catch-all, deleted): the next RCPT asks again, so a
 * domain verified a moment ago takes mail with no restart. A lookup that began before a fact
 * arrived is not kept (it may hold the state before the change).
 */
import { ttlCache, type TtlCache } from '@mailroom/platform';

export interface DomainRoute {
  served: boolean;
  /** Where mail to unknown addresses of the domain goes; null: refused. */
  catch_all_address: string | null;
  /** A custom domain's: the organizations whose inboxes take mail on it (absent for MAIL_DOMAIN and MAIL_EXTRA_DOMAINS). */
  org_ids?: string[];
}
export type RouteLookup = (name: string) => Promise<DomainRoute>;

/** How the RecipientResolver asks. */
export interface DomainRoutes {
  route(name: string): Promise<DomainRoute>;
}

const FIXED: DomainRoute = { served: true, catch_all_address: null };
const MAX_NAMES = 100_000;

export class ServedDomains implements DomainRoutes {
  private readonly cache: TtlCache<string, DomainRoute>;
  /** Bumped by every fact: a lookup that saw another value does not keep its answer. */
  private changes = 0;

  constructor(
    private readonly fixed: ReadonlySet<string>,
    private readonly lookup: RouteLookup,
    ttlMs: number,
    now: () => number = Date.now,
  ) {
    this.cache = ttlCache({ max: MAX_NAMES, ttlMs, now });
  }

  async route(name: string): Promise<DomainRoute> {
    if (this.fixed.has(name)) return FIXED;
    const hit = this.cache.get(name);
    if (hit) return hit;
    const seen = this.changes;
    const route = await this.lookup(name);
    if (seen === this.changes) this.cache.set(name, route);
    return route;
  }

  /** A fact said the domain changed. */
  forget(name: string): void {
    this.changes++;
    this.cache.delete(name);
  }
}

/** Routes of fixed names only: for tests and tools with no domains service. */
export function fixedDomains(names: Iterable<string>): DomainRoutes {
  const set = new Set(names);
  return { route: async (name) => (set.has(name) ? FIXED : { served: false, catch_all_address: null }) };
}
