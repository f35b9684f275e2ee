/** Integration runs: check the servers, name the run, sweep leftovers of old crashed runs. */
import { dropStale, newRunId, reachable, serverUrls } from '../infra';

export default async function globalSetup(): Promise<void> {
  const urls = serverUrls();
  const up = await reachable(urls);
  if (!up.postgres || !up.nats) {
    throw new Error(
      `integration tests need PostgreSQL and NATS with JetStream: postgres ${up.postgres ? 'up' : 'DOWN'} at ${urls.databaseUrl}, ` +
        `nats ${up.nats ? 'up' : 'DOWN'} at ${urls.natsUrl}. Start them (see README) or set TEST_DATABASE_URL / TEST_NATS_URL.`,
    );
  }
  process.env.MAILROOM_TEST_RUN = newRunId();
  await dropStale(urls);
}
