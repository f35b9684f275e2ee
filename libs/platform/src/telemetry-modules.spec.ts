import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { ModuleOfSpans, claimActiveSpan, exportingByModule, inModule } from './telemetry-modules';

describe("each module's service.name in one process", () => {
  const memory = new InMemorySpanExporter();
  const modules = new ModuleOfSpans();
  let provider: TracerProvider;
  const exported = async (): Promise<{ name: string; service: unknown }[]> => {
    await provider.forceFlush();
    const out: ReadableSpan[] = [];
    exportingByModule({ export: (spans, done) => (out.push(...spans), done({ code: 0 })), shutdown: async () => {} }, modules, 'mailroom', (base, m) =>
      base.merge(resourceFromAttributes({ 'service.name': m })),
    ).export(memory.getFinishedSpans(), () => {});
    return out.map((s) => ({ name: s.name, service: s.resource.attributes['service.name'] }));
  };

  beforeAll(() => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    provider = new TracerProvider({ resource: resourceFromAttributes({ 'service.name': 'mailroom' }), spanProcessors: [modules, new SimpleSpanProcessor({ exporter: memory })] });
  });
  afterAll(() => context.disable());
  beforeEach(() => memory.reset());

  it("names spans after the module whose work started them, children included, and leaves the others the process's", async () => {
    const tracer = provider.getTracer('t');
    await inModule('mailbox', async () => {
      await new Promise((r) => setTimeout(r, 1));
      tracer.startActiveSpan('process mail.inbound', (span) => {
        tracer.startSpan('pg.query').end();
        span.end();
      });
    });
    tracer.startSpan('outside').end();
    expect(await exported()).toEqual([
      { name: 'pg.query', service: 'mailbox' },
      { name: 'process mail.inbound', service: 'mailbox' },
      { name: 'outside', service: 'mailroom' },
    ]);
  });

  it('gives a span started outside any module (an HTTP server span) to the module that claims it, with what is below it', async () => {
    const tracer = provider.getTracer('t');
    tracer.startActiveSpan('POST /api/v1/inboxes', (server) => {
      tracer.startActiveSpan('middleware', (middleware) => {
        claimActiveSpan('gateway');
        tracer.startSpan('rpc mailbox.inbox.create').end();
        middleware.end();
      });
      server.end();
    });
    expect(await exported()).toEqual([
      { name: 'rpc mailbox.inbox.create', service: 'gateway' },
      { name: 'middleware', service: 'gateway' },
      { name: 'POST /api/v1/inboxes', service: 'gateway' },
    ]);
    expect(trace.getActiveSpan()).toBeUndefined();
  });
});
