/** rspamd's own liveness answer (GET /ping: "pong"). */
import type { Reachability } from '../domain/ports';

export class RspamdClient {
  constructor(
    private readonly url: string,
    private readonly timeoutMs = 2_500,
  ) {}

  async ping(): Promise<Reachability> {
    try {
      const res = await fetch(new URL('/ping', this.url), { signal: AbortSignal.timeout(this.timeoutMs) });
      const text = (await res.text()).trim();
      if (!res.ok) return { reachable: false, error: `HTTP ${res.status}` };
      return text.startsWith('pong') ? { reachable: true, error: null } : { reachable: false, error: 'unexpected answer to /ping' };
    } catch (err) {
      return { reachable: false, error: err instanceof Error ? err.message : String(err) };
    }
  }
}
