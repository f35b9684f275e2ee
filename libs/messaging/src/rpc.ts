/**
 * Request/reply over NATS. Operation `<service>.<entity>.<verb>` is served on subject
 * `rpc.<operation>` in the queue group named after the service. Failures answer with the
 * NATS micro-services error headers (Nats-Service-Error-Code = HTTP status,
 * Nats-Service-Error = message) and a JSON body carrying our stable error code.
 * Callers get AppError back: no responders -> service_unavailable (503), timeout ->
 * gateway_timeout (504).
 */
import { headers as natsHeaders, errors as natsErrors, nuid, type Msg, type Subscription } from '@nats-io/transport-node';
import { context, INVALID_SPAN_CONTEXT, isSpanContextValid, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import {
  AppError,
  HEADERS,
  RPC_SCHEMAS,
  rpcErrorBody,
  rpcNamesOf,
  rpcServiceOf,
  rpcSubject,
  type AuthContext,
  type RpcName,
  type RpcNamesOf,
  type RpcParsedRequest,
  type RpcParsedResponse,
  type RpcRequest,
  type RpcResponse,
  type RpcService,
} from '@mailroom/contracts';
import type { Logger } from 'pino';
import { DURATION_BUCKETS_S, SERVICE_ATTRIBUTE, meterOf, moduleContext, unsampledTrace } from '@mailroom/platform';
import type { z } from 'zod';
import { maxBodyBytes, type Bus } from './bus';
import { decodeJson, encodeJson } from './codec';
import { readCall, toHeaders, traceIdOf, type CallContext } from './headers';
import { openBucket, type ObjectStore } from './objects';
import { openReply, sealReply } from './sealed-reply';
import { extractContext, injectContext, messagingAttributes, tracer } from './trace-context';

export interface RpcContext extends CallContext {
  log: Logger;
}

export type RpcHandler<N extends RpcName> = (req: RpcParsedRequest<N>, ctx: RpcContext) => Promise<RpcResponse<N>>;
export type RpcHandlers<S extends RpcService> = { [N in RpcNamesOf<S>]: RpcHandler<N> };

export interface RpcServer {
  /** Stops taking requests and waits for those in flight. */
  stop(): Promise<void>;
}

export interface ServeOptions {
  /** Requests handled at once by this instance; beyond it callers get 503 at once. */
  maxInFlight?: number;
}

function zodDetails(error: z.ZodError) {
  return error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
}

export function serveRpc<S extends RpcService>(bus: Bus, service: S, handlers: RpcHandlers<S>, opts: ServeOptions = {}): RpcServer {
  const log = bus.log.child({ component: 'rpc', service });
  const maxInFlight = opts.maxInFlight ?? 512;
  const inFlight = new Set<Promise<void>>();
  const subs: Subscription[] = [];

  // Each operation's duration and failures (error.type: the stable error code), per operation of this service.
  const duration = meterOf().createHistogram('rpc.server.call.duration', {
    description: 'Duration of the RPCs this service answered, by operation; error.type names the error code of a failure',
    unit: 's',
    advice: { explicitBucketBoundaries: DURATION_BUCKETS_S },
  });
  // Made once per operation: a request answered without error allocates nothing for its measurement.
  const attributesOf = new Map<string, Record<string, string>>();
  for (const name of rpcNamesOf(service)) attributesOf.set(name, { 'rpc.system.name': 'nats', 'rpc.method': name, [SERVICE_ATTRIBUTE]: service });

  for (const name of rpcNamesOf(service)) subs.push(subscribe(name, handlers[name]));

  // A request answers only to a caller's reply inbox (bus-permissions inboxPrefix): a reply
  // subject that names a stream's subject would make this service publish into it, and a
  // message a JetStream consumer delivered here (reply $JS.ACK...) is no caller's request.
  const fromCaller = (msg: Msg) => typeof msg.reply === 'string' && /^_INBOX[._]/.test(msg.reply) && !/[*>]/.test(msg.reply);

  function subscribe<N extends RpcNamesOf<S>>(name: N, handler: RpcHandler<N>): Subscription {
    return bus.nc.subscribe(bus.ns.subject(rpcSubject(name)), {
      queue: bus.ns.queue(service),
      callback: (err, msg) => {
        if (err) {
          log.error({ err, op: name }, 'subscription error');
          return;
        }
        if (!fromCaller(msg)) {
          log.warn({ op: name, reply: msg.reply?.slice(0, 120) ?? null }, 'request without a reply inbox: dropped');
          return;
        }
        if (inFlight.size >= maxInFlight) {
          respondError(msg, new AppError('service_unavailable', `${service} is overloaded; retry shortly`));
          return;
        }
        const p = handle(name, handler, msg).finally(() => inFlight.delete(p));
        inFlight.add(p);
      },
    });
  }

  async function handle<N extends RpcName>(name: N, handler: RpcHandler<N>, msg: Msg): Promise<void> {
    const { call, refused } = readCall(msg.headers, bus.seal && { seal: bus.seal, subject: msg.subject });
    // A forgery, a caller without the gateway's key, or clocks apart: the kind says which
    // caller to look at; the context itself (ids) is not logged.
    if (refused) log.warn({ op: name, claimed_kind: refused.kind, seal: refused.seal }, 'auth context not sealed by a trusted key; served as anonymous');
    // The request's logger is made only if something is logged: a child logger per request is not free.
    let child: Logger | undefined;
    // With telemetry on, every line carries the active span's ids (the logger's mixin); off, the caller's trace id.
    const reqLog = () =>
      (child ??= log.child({ op: name, request_id: call.requestId, ...(isSpanContextValid(trace.getSpanContext(context.active()) ?? INVALID_SPAN_CONTEXT) ? {} : { trace_id: traceIdOf(call.traceparent) }) }));
    const started = performance.now();
    let failed: string | undefined;
    const parent = extractContext(msg.headers, moduleContext(service));
    const serve = async (span?: Span): Promise<void> => {
      try {
        let body: unknown;
        try {
          body = msg.data.length === 0 ? {} : decodeJson(msg.data);
        } catch {
          throw new AppError('invalid_request', 'request body is not valid JSON');
        }
        const parsed = RPC_SCHEMAS[name].request.safeParse(body);
        if (!parsed.success) {
          throw new AppError('invalid_request', 'request is invalid', { details: zodDetails(parsed.error) });
        }
        const result = await handler(parsed.data, {
          ...call,
          get log() {
            return reqLog();
          },
        });
        const data = encodeJson(result ?? {});
        // Too large for one NATS message (a message with megabytes of text): the body goes
        // through the replies bucket, sealed, and the reply names it and carries its key.
        if (data.length > maxBodyBytes(bus)) {
          const object = `${name}.${nuid.next()}`;
          const { sealed, key } = sealReply(data);
          await (await repliesOf(bus)).putBlob({ name: object }, sealed);
          const h = natsHeaders();
          h.set(HEADERS.replyObject, object);
          h.set(HEADERS.replyKey, key);
          msg.respond(new Uint8Array(0), { headers: h });
        } else {
          msg.respond(data);
        }
      } catch (err) {
        const appErr = toAppError(err);
        failed = appErr.code;
        if (appErr.code === 'internal_error') {
          reqLog().error({ err }, 'operation failed');
          span?.setStatus({ code: SpanStatusCode.ERROR });
        }
        respondError(msg, appErr);
      } finally {
        span?.end();
        const measured = attributesOf.get(name)!;
        duration.record((performance.now() - started) / 1000, failed === undefined ? measured : { ...measured, 'error.type': failed });
      }
    };
    // A caller's trace sampled out: served in its context, without a span that would record nothing.
    await context.with(parent, () =>
      unsampledTrace(parent)
        ? serve()
        : tracer.startActiveSpan(
            `rpc ${name}`,
            { kind: SpanKind.SERVER, attributes: messagingAttributes('process', rpcSubject(name), { 'rpc.system': 'nats', 'rpc.method': name }) },
            serve,
          ),
    );
  }

  return {
    async stop() {
      await Promise.all(subs.map((s) => s.drain().catch(() => s.unsubscribe())));
      await Promise.allSettled([...inFlight]);
    },
  };
}

export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  return new AppError('internal_error', 'internal error', { cause: err });
}

function respondError(msg: Msg, err: AppError): void {
  const h = natsHeaders();
  h.set(HEADERS.errorCode, String(err.status));
  h.set(HEADERS.error, err.message.replace(/[\r\n]+/g, ' '));
  msg.respond(
    encodeJson({ code: err.code, message: err.message, details: err.details, retryable: err.retryable, retry_after_seconds: err.retryAfterSeconds }),
    { headers: h },
  );
}

export interface CallOptions {
  timeoutMs?: number;
}

export const DEFAULT_RPC_TIMEOUT_MS = 5_000;

export async function callRpc<N extends RpcName>(
  bus: Bus,
  name: N,
  request: RpcRequest<N>,
  call: CallContext,
  opts: CallOptions = {},
): Promise<RpcParsedResponse<N>> {
  const subject = bus.ns.subject(rpcSubject(name));
  const h = toHeaders(call, bus.seal && { seal: bus.seal, subject });
  const exchange = async (span?: Span): Promise<RpcParsedResponse<N>> => {
    injectContext(h, context.active());
    const data = encodeJson(request);
    // NATS refuses a message over the server's max_payload; say so rather than "bus unavailable".
    const max = maxBodyBytes(bus);
    if (data.length > max) {
      span?.end();
      throw new AppError('payload_too_large', `the request is ${data.length} bytes once encoded; at most ${max} bytes can be carried to the ${rpcServiceOf(name)} service`);
    }
    let reply: Msg;
    try {
      reply = await bus.nc.request(subject, data, {
        timeout: opts.timeoutMs ?? DEFAULT_RPC_TIMEOUT_MS,
        headers: h,
      });
    } catch (err) {
      span?.setStatus({ code: SpanStatusCode.ERROR });
      span?.end();
      throw transportError(name, err);
    }
    span?.end();
    const object = reply.headers?.get(HEADERS.replyObject);
    if (object && !reply.headers?.get(HEADERS.errorCode)) return decodeReply(name, reply, await readReply(bus, name, object, reply.headers?.get(HEADERS.replyKey) ?? ''));
    return decodeReply(name, reply);
  };
  // In a trace sampled out, no span that would record nothing: the request carries the caller's context as it is.
  if (unsampledTrace(context.active())) return exchange();
  const attributes = messagingAttributes('send', rpcSubject(name), { 'rpc.system': 'nats', 'rpc.method': name });
  return tracer.startActiveSpan(`rpc ${name}`, { kind: SpanKind.CLIENT, attributes }, exchange);
}

/** The replies bucket of a bus, opened once. */
const replies = new WeakMap<Bus, Promise<ObjectStore>>();
function repliesOf(bus: Bus): Promise<ObjectStore> {
  let bucket = replies.get(bus);
  if (!bucket) {
    bucket = openBucket(bus, 'replies');
    // Not kept if it failed: the next large reply tries again.
    bucket.catch(() => replies.delete(bus));
    replies.set(bus, bucket);
  }
  return bucket;
}

/** A large reply's body, read from the replies bucket, opened with its key, and removed (its lifetime there removes it otherwise). */
async function readReply(bus: Bus, name: RpcName, object: string, key: string): Promise<Uint8Array> {
  try {
    const bucket = await repliesOf(bus);
    const data = await bucket.getBlob(object);
    if (!data) throw new Error(`reply object ${object} not found`);
    void bucket.delete(object).catch(() => {});
    return openReply(data, key);
  } catch (err) {
    throw new AppError('service_unavailable', `the reply of the ${rpcServiceOf(name)} service could not be read; retry shortly`, { cause: err });
  }
}

function transportError(name: RpcName, err: unknown): AppError {
  const service = rpcServiceOf(name);
  if (err instanceof natsErrors.RequestError && err.isNoResponders()) {
    return new AppError('service_unavailable', `the ${service} service is unavailable; retry shortly`, { cause: err });
  }
  if (err instanceof natsErrors.NoRespondersError) {
    return new AppError('service_unavailable', `the ${service} service is unavailable; retry shortly`, { cause: err });
  }
  if (err instanceof natsErrors.TimeoutError || (err instanceof Error && err.cause instanceof natsErrors.TimeoutError)) {
    return new AppError('gateway_timeout', `the ${service} service did not answer in time`, { cause: err });
  }
  return new AppError('service_unavailable', `the message bus is unavailable; retry shortly`, { cause: err });
}

function decodeReply<N extends RpcName>(name: N, reply: Msg, data: Uint8Array = reply.data): RpcParsedResponse<N> {
  const status = reply.headers?.get(HEADERS.errorCode);
  let body: unknown;
  try {
    body = data.length === 0 ? {} : decodeJson(data);
  } catch {
    throw new AppError('internal_error', `invalid reply from ${name}`);
  }
  if (status) {
    const parsed = rpcErrorBody.safeParse(body);
    if (!parsed.success) {
      throw new AppError('internal_error', `invalid error reply from ${name} (status ${status})`);
    }
    throw new AppError(parsed.data.code, parsed.data.message, {
      ...(parsed.data.details ? { details: parsed.data.details } : {}),
      ...(parsed.data.retryable === undefined ? {} : { retryable: parsed.data.retryable }),
      ...(parsed.data.retry_after_seconds === undefined ? {} : { retryAfterSeconds: parsed.data.retry_after_seconds }),
    });
  }
  const parsed = RPC_SCHEMAS[name].response.safeParse(body);
  if (!parsed.success) {
    throw new AppError('internal_error', `reply of ${name} does not match its contract`, { cause: parsed.error });
  }
  return parsed.data;
}

/** A caller bound to one bus, for services that call others. */
export class RpcClient {
  constructor(
    private readonly bus: Bus,
    private readonly defaults: CallOptions = {},
  ) {}

  call<N extends RpcName>(name: N, request: RpcRequest<N>, call: CallContext, opts: CallOptions = {}): Promise<RpcParsedResponse<N>> {
    return callRpc(this.bus, name, request, call, { ...this.defaults, ...opts });
  }

  /** Service-to-service call: the auth context says which service asks. */
  asService<N extends RpcName>(service: string, name: N, request: RpcRequest<N>, parent: Pick<CallContext, 'requestId' | 'traceparent'>): Promise<RpcParsedResponse<N>> {
    const auth: AuthContext = { kind: 'service', service };
    return this.call(name, request, { ...parent, auth });
  }
}
