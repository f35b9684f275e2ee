/**
 * Each module's own service.name, also when several run in one process (the all-in-one):
 * a module's work runs in a context that names it (inModule: runtime's startService wraps a
 * module's start in it, and everything the module starts, its connections' and timers'
 * callbacks included, runs in that context), every span started there is the module's, a
 * child span is its parent's module's, and the exporter sends each span under a resource
 * whose service.name is its module. A span of no module keeps the process's name.
 * The API parts cost nothing with telemetry off; the SDK parts are loaded only when it is on.
 */
import { context, createContextKey, trace, type Context, type Span } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace';

export const MODULE_KEY = createContextKey('mailroom.module');

/** The context of a module's work: no span (nothing started there is a child of what ran before), its name. */
export function moduleContext(name: string, base: Context = context.active()): Context {
  return trace.deleteSpan(base).setValue(MODULE_KEY, name);
}

/** Runs `fn` (a module's start) in its module's context. */
export function inModule<T>(name: string, fn: () => T): T {
  return context.with(moduleContext(name), fn);
}

/** Spans a module claimed after they started (a server span an instrumentation started outside any module's context). */
const claimed = new WeakMap<object, string>();
/** Each span's parent in this process, for spans that started outside any module's context. */
const parents = new WeakMap<object, Span>();

/**
 * The local root of the active span (the HTTP server span an instrumentation started, above
 * the middleware's) is `module`'s, and so is all below it. Nothing when none is active.
 */
export function claimActiveSpan(module: string): void {
  let span = trace.getActiveSpan();
  if (!span?.isRecording()) return;
  for (let parent = parents.get(span); parent?.isRecording(); parent = parents.get(parent)) span = parent;
  claimed.set(span, module);
}

/** The module of each span, for the exporter: from the context it started in, else claimed, else its parent's. */
export class ModuleOfSpans implements SpanProcessor {
  private readonly modules = new WeakMap<object, string>();

  onStart(span: Span, parentContext: Context): void {
    const named = parentContext.getValue(MODULE_KEY);
    if (typeof named === 'string') {
      this.modules.set(span, named);
      return;
    }
    const parent = trace.getSpan(parentContext);
    if (parent) parents.set(span, parent);
  }

  /** Resolved when exported: a parent may have been claimed after its child started. */
  moduleOf(span: ReadableSpan): string | undefined {
    for (let s: object | undefined = span, depth = 0; s && depth < 64; s = parents.get(s), depth++) {
      const module = this.modules.get(s) ?? claimed.get(s);
      if (module) return module;
    }
    return undefined;
  }

  onEnd(): void {}
  async forceFlush(): Promise<void> {}
  async shutdown(): Promise<void> {}
}

/** An exporter that sends each span under its module's resource (service.name = the module), then to `inner`. */
export function exportingByModule(
  inner: SpanExporter,
  modules: ModuleOfSpans,
  processName: string,
  named: (resource: Resource, module: string) => Resource,
): SpanExporter {
  const resources = new Map<string, Resource>();
  const resourceOf = (base: Resource, module: string) => {
    let r = resources.get(module);
    if (!r) resources.set(module, (r = named(base, module)));
    return r;
  };
  return {
    export(spans, done) {
      const renamed = spans.map((span) => {
        const module = modules.moduleOf(span);
        if (!module || module === processName) return span;
        // The span as it is, seen under its module's resource (the SDK's span keeps its fields as own properties).
        return Object.create(span, { resource: { value: resourceOf(span.resource, module) } }) as ReadableSpan;
      });
      inner.export(renamed, done);
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
}
