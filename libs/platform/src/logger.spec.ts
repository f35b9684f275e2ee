import { Writable } from 'node:stream';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ROOT_CONTEXT, TraceFlags, context, trace } from '@opentelemetry/api';
import { activeTraceparent, createLogger } from './logger';

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

describe('trace ids', () => {
  const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
  const SPAN_ID = 'b7ad6b7169203331';
  beforeAll(() => context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable()));
  afterAll(() => context.disable());

  it('are on every line written while a span is active, and on no other', () => {
    const { log, lines } = capturing();
    const active = trace.setSpanContext(ROOT_CONTEXT, { traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: TraceFlags.SAMPLED });
    context.with(active, () => log.child({ request_id: 'req_1' }).info('inside'));
    log.info('outside');
    const [inside, outside] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(inside).toMatchObject({ trace_id: TRACE_ID, span_id: SPAN_ID, request_id: 'req_1', msg: 'inside' });
    expect(outside).not.toHaveProperty('trace_id');
    expect(outside).not.toHaveProperty('span_id');
    expect(context.with(active, activeTraceparent)).toBe(`00-${TRACE_ID}-${SPAN_ID}-01`);
    expect(activeTraceparent()).toBeUndefined();
  });
});
