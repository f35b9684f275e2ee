import { z } from 'zod';
import { ConfigError, checkBusSettings, commonEnv, envBool, envInt, natsTlsFiles, parseConfig } from './config';

describe('config', () => {
  const schema = z.object({ PORT: envInt(8080, { min: 1, max: 65535 }), DEBUG: envBool(false), NAME: z.string() });

  it('applies defaults and parses explicit booleans', () => {
    expect(parseConfig(schema, { NAME: 'x' })).toEqual({ PORT: 8080, DEBUG: false, NAME: 'x' });
    expect(parseConfig(schema, { NAME: 'x', DEBUG: 'yes', PORT: '9' })).toEqual({ PORT: 9, DEBUG: true, NAME: 'x' });
  });

  it('lists every problem at once', () => {
    let error: unknown;
    try {
      parseConfig(schema, { PORT: 'eighty', DEBUG: 'maybe' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems.map((p) => p.split(':')[0])).toEqual(['PORT', 'DEBUG', 'NAME']);
  });
});

describe('NATS TLS settings', () => {
  const schema = z.object(commonEnv);

  it('are all optional, and empty counts as unset', () => {
    const c = parseConfig(schema, { NATS_TLS_CA_FILE: '', NATS_TLS_CERT_FILE: '' });
    expect(natsTlsFiles(c)).toBeUndefined();
    expect(checkBusSettings({ NATS_TLS_CERT_FILE: '', NATS_TLS_KEY_FILE: '' })).toEqual([]);
  });

  it('give the files that are set', () => {
    expect(natsTlsFiles(parseConfig(schema, { NATS_TLS_CA_FILE: '/ca.crt' }))).toEqual({ caFile: '/ca.crt' });
    const env = { NATS_TLS_CA_FILE: '/ca.crt', NATS_TLS_CERT_FILE: '/c.crt', NATS_TLS_KEY_FILE: '/c.key' };
    expect(natsTlsFiles(parseConfig(schema, env))).toEqual({ caFile: '/ca.crt', certFile: '/c.crt', keyFile: '/c.key' });
    expect(checkBusSettings(env)).toEqual([]);
  });

  it('refuse a client certificate without its key, and a key without its certificate', () => {
    expect(checkBusSettings({ NATS_TLS_CERT_FILE: '/c.crt' })).toEqual([expect.stringMatching(/^NATS_TLS_KEY_FILE: is required with NATS_TLS_CERT_FILE/)]);
    expect(checkBusSettings({ NATS_TLS_KEY_FILE: '/c.key', NATS_TLS_CERT_FILE: '' })).toEqual([expect.stringMatching(/^NATS_TLS_CERT_FILE: is required with NATS_TLS_KEY_FILE/)]);
  });

  it('require the service\'s bus credentials in production only', () => {
    expect(checkBusSettings({ MAILROOM_ENV: 'production' })).toEqual([expect.stringMatching(/^NATS_CREDENTIALS_DIR: is required in production/)]);
    expect(checkBusSettings({ MAILROOM_ENV: 'production', NATS_CREDENTIALS_DIR: '' })).toHaveLength(1);
    expect(checkBusSettings({ MAILROOM_ENV: 'production', NATS_CREDENTIALS_DIR: '/etc/mailroom/bus' })).toEqual([]);
    expect(checkBusSettings({ MAILROOM_ENV: 'development' })).toEqual([]);
  });
});

describe('the OTLP endpoint', () => {
  const schema = z.object(commonEnv);

  it('turns tracing on with a URL, off when unset or empty (docker-compose passes it empty), and refuses anything else', () => {
    expect(parseConfig(schema, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector:4318' }).OTEL_EXPORTER_OTLP_ENDPOINT).toBe('http://otel-collector:4318');
    expect(parseConfig(schema, { OTEL_EXPORTER_OTLP_ENDPOINT: '' }).OTEL_EXPORTER_OTLP_ENDPOINT).toBeUndefined();
    expect(parseConfig(schema, {}).OTEL_EXPORTER_OTLP_ENDPOINT).toBeUndefined();
    expect(() => parseConfig(schema, { OTEL_EXPORTER_OTLP_ENDPOINT: 'otel-collector' })).toThrow(ConfigError);
  });
});
