/**
 * A nats-server of a test's own, for tests that kill it or run it with TLS: the binary the
 * launcher found (MAILROOM_NATS_SERVER), the run's operator (so it refuses anonymous clients
 * and admits the credentials test contexts mint, as the shared server does), JetStream in a
 * directory of the test's.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

export function natsServerBinary(): string {
  const found = [process.env.MAILROOM_NATS_SERVER, '/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server'].find((p) => p && existsSync(p));
  if (!found) throw new Error('no nats-server binary: run the tests with `npm test` (the launcher finds or fetches one and sets MAILROOM_NATS_SERVER)');
  return found;
}

/** Writes `<dir>/server.conf` for a server on 127.0.0.1:<port>; `extra` lines go in as they are (a tls block). */
export function natsServerConfig(opts: { dir: string; port: number; extra?: string[] }): string {
  const auth = process.env.TEST_NATS_AUTH_DIR;
  if (!auth) throw new Error('TEST_NATS_AUTH_DIR is not set: run the tests with `npm test`');
  const file = join(opts.dir, 'server.conf');
  writeFileSync(
    file,
    [
      `listen: 127.0.0.1:${opts.port}`,
      `jetstream { store_dir: ${JSON.stringify(opts.dir)} }`,
      // nats-server resolves an include against the including file's directory.
      `include ${JSON.stringify(relative(opts.dir, join(auth, 'nats-auth.conf')))}`,
      ...(opts.extra ?? []),
      '',
    ].join('\n'),
  );
  return file;
}
