/**
 * Integration runs: check the servers (`npm test` brings them up, see apps/launcher), name
 * the run, sweep leftovers of old crashed runs, and make the run's template database from
 * the schemas given (see ../template.ts). The jest config's global set-up calls this with
 * every service's schema (apps/all-in-one/test/jest/), since a lib may not import the services.
 */
import { dropStale, newRunId, reachable, serverUrls, shownUrl } from '../infra';
import { createTemplateDatabase, TEMPLATE_ENV, templateName, type SchemaMigrations } from '../template';

export async function setUpIntegrationRun(template: SchemaMigrations[]): Promise<void> {
  const urls = serverUrls();
  const up = await reachable(urls);
  const down = [
    !up.postgres && `PostgreSQL at ${shownUrl(urls.databaseUrl)}`,
    !up.nats && `NATS at ${shownUrl(urls.natsUrl)}`,
    !up.rspamd && `rspamd at ${urls.rspamdUrl}`,
  ].filter(Boolean);
  // One line, at once: not a failure deep in a spec.
  if (down.length) throw new Error(`integration tests cannot reach ${down.join(', ')}: run them with \`npm test\`, which starts what is missing (or set TEST_DATABASE_URL, TEST_NATS_URL, TEST_RSPAMD_URL)`);
  const run = newRunId();
  process.env.MAILROOM_TEST_RUN = run;
  await dropStale(urls);
  await createTemplateDatabase(urls.databaseUrl, templateName(run), template);
  process.env[TEMPLATE_ENV] = templateName(run);
}
