/**
 * The global set-up of the integration tests (jest.config.js), here because it needs the
 * services: the run's template database holds the schema of every service the platform runs.
 */
import { setUpIntegrationRun } from '@mailroom/testing';
import { SERVICES } from '../../src/platform';

export default async function globalSetup(): Promise<void> {
  await setUpIntegrationRun(Object.values(SERVICES).flatMap((m) => (m.database ? [m.database] : [])));
}
