/** Safety net: whatever a crashed test file left behind in this run goes now. */
import { deleteStreams, dropDatabases, serverUrls } from '../infra';
import './global-setup';

export default async function globalTeardown(): Promise<void> {
  const run = process.env.MAILROOM_TEST_RUN;
  if (!run) return;
  const urls = serverUrls();
  await deleteStreams(urls.natsUrl, (name) => name.startsWith(run));
  await dropDatabases(urls.databaseUrl, (name) => name.startsWith(run));
  await globalThis.mailroomContainers?.stop();
}
