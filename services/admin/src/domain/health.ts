/**
 * The platform's health now: every probe at once, each bounded (a probe that fails or hangs
 * reports unreachable, never fails the report), the instances grouped by service, and the
 * status rule (health-status.ts) over it all.
 */
import type { HealthReport } from '@mailroom/contracts';
import type { Clock } from '@mailroom/platform';
import { overallStatus, type StatusLimits } from './health-status';
import type { HealthProbes, Reachability } from './ports';

export const PROBE_TIMEOUT_MS = 3_000;

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** `probe`'s answer, or `failed(error)` when it throws or takes longer than the bound. */
export async function bounded<T>(probe: () => Promise<T>, failed: (error: string) => T, timeoutMs = PROBE_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      probe(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } catch (err) {
    return failed(message(err));
  } finally {
    clearTimeout(timer);
  }
}

const unreachable = (error: string): Reachability => ({ reachable: false, error });

export class Health {
  constructor(
    private readonly probes: HealthProbes,
    private readonly limits: StatusLimits,
    private readonly clock: Clock,
  ) {}

  async check(): Promise<HealthReport> {
    const p = this.probes;
    const [instances, nats, postgres, rspamd, relay] = await Promise.all([
      bounded(() => p.instances(), () => []),
      bounded(
        () => p.bus(),
        (error) => ({ reachable: false, error, jetstream: { reachable: false, error, storage_bytes: null, max_storage_bytes: null, streams: [], consumers: [] } }),
      ),
      bounded(() => p.postgres(), (error) => ({ reachable: false, error, replication_lag_seconds: null })),
      bounded(() => p.rspamd(), unreachable as (error: string) => Reachability | null),
      bounded(() => p.relay(), (error) => ({ reachable: false, error, host: '', port: 0 })),
    ]);
    const now = this.clock.now();
    const names = [...new Set([...this.limits.expectedServices, ...instances.map((i) => i.service)])];
    const services = names.map((name) => {
      const of = instances
        .filter((i) => i.service === name)
        .map((i) => ({
          instance_id: i.instance_id,
          version: i.version,
          started_at: i.started_at,
          uptime_seconds: Math.max(0, Math.floor((now.getTime() - Date.parse(i.started_at)) / 1000)),
        }))
        .sort((a, b) => a.started_at.localeCompare(b.started_at));
      return { name, status: of.length ? ('up' as const) : ('down' as const), instances: of };
    });
    const seen = { checked_at: now.toISOString(), services, postgres, nats, rspamd, relay };
    return { ...overallStatus(seen, this.limits), ...seen };
  }
}
