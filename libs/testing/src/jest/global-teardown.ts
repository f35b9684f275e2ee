/** The run's template database, and whatever a crashed test file left behind in this run, go now. */
import { deleteStreams, dropDatabases, serverUrls } from '../infra';

export default async function globalTeardown(): Promise<void> {
  const run = process.env.MAILROOM_TEST_RUN;
  if (!run) return;
  const urls = serverUrls();
  await deleteStreams(urls.natsUrl, (name) => name.startsWith(run));
  await dropDatabases(urls.databaseUrl, (name) => name.startsWith(run));
}
