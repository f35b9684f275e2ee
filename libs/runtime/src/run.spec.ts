import { z } from 'zod';
import { ConfigError, parseConfig, type Env } from '@mailroom/platform';
import { loadServiceConfig } from './run';
import { baseEnv, type ServiceModule } from './service-module';

const schema = z.object({ ...baseEnv, PORT: z.string().regex(/^\d+$/, 'must be a number').optional() });
const probe: ServiceModule<z.output<typeof schema>> = {
  name: 'probe',
  loadConfig: (env: Env) => parseConfig(schema, env),
  start: async () => undefined,
};

function problems(env: Env): string[] {
  try {
    loadServiceConfig(probe, env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('loadServiceConfig', () => {
  it('returns the module’s configuration, TLS files included', () => {
    const env = { NATS_URL: 'tls://nats:4222', NATS_TLS_CA_FILE: '/ca.crt', NATS_TLS_CERT_FILE: '/c.crt', NATS_TLS_KEY_FILE: '/c.key' };
    expect(loadServiceConfig(probe, env)).toMatchObject(env);
  });

  it('refuses a client certificate without its key', () => {
    expect(problems({ NATS_TLS_CERT_FILE: '/c.crt' })).toEqual([expect.stringMatching(/^NATS_TLS_KEY_FILE:/)]);
  });

  it('lists that problem with the module’s own, in one error', () => {
    expect(problems({ NATS_TLS_KEY_FILE: '/c.key', PORT: 'eighty' })).toEqual([expect.stringMatching(/^PORT:/), expect.stringMatching(/^NATS_TLS_CERT_FILE:/)]);
  });
});
