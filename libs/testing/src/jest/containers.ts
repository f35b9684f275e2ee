/**
 * Fallback for machines without the local servers but with Docker: PostgreSQL and NATS
 * (JetStream) in throwaway containers via testcontainers. Never used when the servers are
 * reachable, which is the case on CI here (no Docker engine runs on it).
 */
import { existsSync } from 'node:fs';

export interface StartedServers {
  databaseUrl?: string;
  natsUrl?: string;
  stop(): Promise<void>;
}

declare global {
  /** Set by the global set-up when it started containers; the teardown stops them. */
  var mailroomContainers: StartedServers | undefined;
}

export function dockerAvailable(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.DOCKER_HOST) || existsSync('/var/run/docker.sock');
}

export async function startContainers(need: { postgres: boolean; nats: boolean }): Promise<StartedServers> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const stops: (() => Promise<unknown>)[] = [];
  const out: StartedServers = { stop: async () => void (await Promise.all(stops.map((s) => s()))) };
  if (need.postgres) {
    const pg = await new GenericContainer('postgres:17-alpine')
      .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust' })
      .withExposedPorts(5432)
      .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
      .start();
    stops.push(() => pg.stop());
    out.databaseUrl = `postgres://postgres@${pg.getHost()}:${pg.getMappedPort(5432)}/postgres`;
  }
  if (need.nats) {
    const nats = await new GenericContainer('nats:2.10-alpine').withCommand(['-js']).withExposedPorts(4222).withWaitStrategy(Wait.forLogMessage(/Server is ready/)).start();
    stops.push(() => nats.stop());
    out.natsUrl = `nats://${nats.getHost()}:${nats.getMappedPort(4222)}`;
  }
  return out;
}
