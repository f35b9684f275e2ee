/**
 * Integration runs: find the servers (the local ones, or containers when they are absent
 * and Docker is present), name the run, sweep leftovers of old crashed runs, and make the
 * run's template database from the schemas given (see ../template.ts). The jest config's
 * global set-up calls this with every service's schema (apps/all-in-one/test/jest/), since
 * a lib may not import the services.
 */
import { dropStale, newRunId, reachable, serverUrls, shownUrl } from '../infra';
import { createTemplateDatabase, TEMPLATE_ENV, templateName, type SchemaMigrations } from '../template';
import { dockerAvailable, startContainers } from './containers';

export async function setUpIntegrationRun(template: SchemaMigrations[]): Promise<void> {
  let urls = serverUrls();
  const up = await reachable(urls);
  if (!up.postgres || !up.nats) {
    if (!dockerAvailable()) {
      throw new Error(
        `integration tests need PostgreSQL and NATS with JetStream: postgres ${up.postgres ? 'up' : 'DOWN'} at ${shownUrl(urls.databaseUrl)}, ` +
          `nats ${up.nats ? 'up' : 'DOWN'} at ${shownUrl(urls.natsUrl)}. Start them (see README), set TEST_DATABASE_URL / TEST_NATS_URL, or run where Docker is.`,
      );
    }
    const started = await startContainers({ postgres: !up.postgres, nats: !up.nats });
    globalThis.mailroomContainers = started;
    // Workers start after this and inherit the environment.
    if (started.databaseUrl) process.env.TEST_DATABASE_URL = started.databaseUrl;
    if (started.natsUrl) process.env.TEST_NATS_URL = started.natsUrl;
    urls = serverUrls();
  }
  const run = newRunId();
  process.env.MAILROOM_TEST_RUN = run;
  await dropStale(urls);
  await createTemplateDatabase(urls.databaseUrl, templateName(run), template);
  process.env[TEMPLATE_ENV] = templateName(run);
}
