/**
 * Liveness and readiness over HTTP for process supervisors (Kubernetes probes):
 * GET /livez answers 200 while the process runs; GET /readyz runs every check with a
 * bound and answers 200 only when all pass, else 503 with which failed. GET /metrics is the
 * process's metrics in the Prometheus text format (metrics.ts), when its Prometheus reader is on.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startedMetrics } from './metrics';

export type HealthCheck = () => Promise<unknown>;
export type HealthChecks = Record<string, HealthCheck>;

export interface HealthReport {
  status: 'ok' | 'fail';
  checks: Record<string, { status: 'ok' | 'fail'; error?: string }>;
}

export async function runChecks(checks: HealthChecks, timeoutMs = 2_000): Promise<HealthReport> {
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          check(),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
          }),
        ]);
        return [name, { status: 'ok' as const }] as const;
      } catch (err) {
        return [name, { status: 'fail' as const, error: err instanceof Error ? err.message : String(err) }] as const;
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  const result = Object.fromEntries(entries);
  return { status: entries.every(([, r]) => r.status === 'ok') ? 'ok' : 'fail', checks: result };
}

export interface HealthServer {
  server: Server;
  port: number;
  close(): Promise<void>;
}

export async function startHealthServer(port: number, checks: HealthChecks, host = '0.0.0.0'): Promise<HealthServer> {
  const server = createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'GET') return send(405, { status: 'fail' });
    if (req.url === '/livez') return send(200, { status: 'ok' });
    if (req.url === '/metrics') {
      const scrape = startedMetrics()?.scrape;
      if (scrape) return scrape(req, res);
      return send(404, { status: 'fail', error: 'metrics are off (OTEL_METRICS_EXPORTER)' });
    }
    if (req.url === '/readyz') {
      void runChecks(checks).then((report) => send(report.status === 'ok' ? 200 : 503, report));
      return;
    }
    send(404, { status: 'fail' });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
