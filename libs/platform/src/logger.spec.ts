import { Writable } from 'node:stream';
import { createLogger } from './logger';

/** A logger whose lines the test reads. */
function capturing() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { log: createLogger({ service: 't', destination }), lines };
}

it('redacts secrets wherever they appear', () => {
  const { log, lines } = capturing();
  log.info({ password: 'hunter22', body: { refresh_token: 'mrt_x', text_body: 'hello' }, req: { headers: { authorization: 'Bearer mr_x' } } }, 'x');
  const line = lines.join('');
  for (const secret of ['hunter22', 'mrt_x', 'hello', 'mr_x']) expect(line).not.toContain(secret);
  expect(line).toContain('[redacted]');
});

it('redacts the URL a parse error keeps, password and all', () => {
  const { log, lines } = capturing();
  let err: unknown;
  try {
    new URL('postgres://mailroom:s3/cret@db:5432/mailroom');
  } catch (e) {
    err = e;
  }
  log.fatal({ err }, 'migrate failed');
  log.error({ cause: { err } }, 'nested');
  const line = lines.join('');
  expect(line).toContain('Invalid URL');
  expect(line).not.toContain('s3/cret');
});
