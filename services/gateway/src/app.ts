/**
 * The HTTP edge: request id, credential, rate limit, input validation, idempotency, one
 * RPC, and the mapping of its answer or error to HTTP. Everything it answers is JSON in
 * the error shape of the API when it fails: never HTML, never a stack trace.
 */
import { isAscii, isUtf8 } from 'node:buffer';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { z } from 'zod';
import { AppError, authorize, newId, randomHex, type AuthContext, type ErrorDetail, type RouteAccess, type RpcName } from '@mailroom/contracts';
import { validTraceparent, type CallContext, type RpcClient } from '@mailroom/messaging';
import { activeTraceparent, claimActiveSpan, type GuardedFetch, type Logger } from '@mailroom/platform';
import type { Authenticator } from './auth/authenticator';
import { BODY_NOT_UTF8, fromMiddlewareError, sendError } from './http/errors';
import { IdempotencyStore } from './http/idempotency';
import type { RateLimiter } from './http/rate-limit';
import { DOWNLOAD_IDLE_MS, DOWNLOAD_START_MS, sendDownload, type Download, type ObjectReader } from './http/download';
import { receiveUpload, type ObjectWriter } from './http/upload';
import { download as downloadSchema, isTenant, message as messageSchema, threadWithMessages } from '@mailroom/contracts';
import { withDownloadLinks, type DownloadLinks, type LinkTarget } from './domain/download-links';
import { fetchAttachment, withUrlAttachments } from './http/url-attachment';

/** What an operation of a route with `textResponse` answers. */
const textDocument = z.object({ content_type: z.string().min(1), text: z.string() });
import { bindBrowser, boundSecret } from './http/browser-binding';
import { httpServerMetrics } from './http/metrics';
import { accessOf, expressPath, pathPattern, type OpRoute, type PartParser, type PendingRoute, type Route } from './routes';

export interface AppDeps {
  routes: Route[];
  authenticator: Authenticator;
  rpc: RpcClient;
  limiter: RateLimiter;
  anonymousLimiter: RateLimiter;
  idempotency: IdempotencyStore;
  openapi: Record<string, unknown>;
  log: Logger;
  bodyLimitBytes: number;
  rpcTimeoutMs: number;
  trustProxy: boolean;
  /** What downloads read, each bucket a route may name (read a few chunks ahead of the client: main.ts). */
  buckets: Record<Download['bucket'], ObjectReader>;
  /** Where uploads are streamed (MAIL_UPLOADS), and the most one may hold (SEND_MAX_MESSAGE_BYTES). */
  uploads: { bucket: ObjectWriter; maxBytes: number };
  /** Signed download links: made for message reads, checked on GET /api/v1/downloads/{token}. */
  links: DownloadLinks;
  /** The API's public URL (PUBLIC_API_URL); empty: each request's own origin. */
  publicUrl: string;
  /** Attachments given by URL: fetched through the SSRF guard within timeoutMs, stored in the uploads bucket. */
  urlAttachments: { fetch: GuardedFetch; timeoutMs: number };
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** The Expect value Node's server honours (its own test). */
const CONTINUE = /(?:^|\W)100-continue(?:$|\W)/i;

interface Locals {
  requestId: string;
  traceparent: string;
  readonly log: Logger;
}

function locals(res: Response): Locals {
  return (res.locals as { mr: Locals }).mr;
}

/** A new W3C traceparent (sampled), for requests that arrive without one. */
function newTraceparent(): string {
  const id = randomHex(24);
  return `00-${id.slice(0, 32)}-${id.slice(32)}-01`;
}

function zodDetails(where: string, error: z.ZodError) {
  return error.issues.map((i) => ({ path: [where, ...i.path].join('.'), message: i.message }));
}

/**
 * How deeply objects and arrays may nest in a request. The deepest schema of the API nests
 * three levels (a send's attachments); 64 leaves room for any future one and keeps every
 * walk over request data (zod's included) far from the end of the stack. JSON.parse itself
 * is not recursive, so a deeper body reaches this check and is refused here.
 */
export const MAX_INPUT_DEPTH = 64;

/**
 * What no text the services store can hold: NUL (U+0000; PostgreSQL refuses it, and no mail
 * text carries it) and unpaired UTF-16 surrogates (a JSON \ud800 escape: no UTF-8 encodes
 * it, so PostgreSQL refuses it in JSON and no client could read it back).
 */
function textProblem(text: string): string | undefined {
  if (text.includes('\u0000')) return 'must not contain NUL characters (U+0000)';
  if (!text.isWellFormed()) return 'must not contain unpaired UTF-16 surrogates (U+D800 to U+DFFF)';
  return undefined;
}

interface Visit {
  value: unknown;
  /** The object key or array index this value is at; the part's name at the root. */
  key: string;
  depth: number;
  parent: Visit | undefined;
}

function pathOf(visit: Visit): string {
  const keys: string[] = [];
  for (let v: Visit | undefined = visit; v; v = v.parent) keys.push(v.key);
  return keys.reverse().join('.');
}

/**
 * The first thing in a request part (params, query or body) that no schema is asked about:
 * nesting beyond MAX_INPUT_DEPTH, NUL or an unpaired surrogate in a string or an object key.
 * Iterative, in document order, so no input can exhaust the stack.
 */
function inputProblem(value: unknown, root: string): { message: string; detail: ErrorDetail } | undefined {
  const stack: Visit[] = [{ value, key: root, depth: 0, parent: undefined }];
  for (let visit = stack.pop(); visit; visit = stack.pop()) {
    const keyProblem = visit.parent && textProblem(visit.key);
    // A bad key is reported at the object holding it: the key itself may not be printable.
    if (visit.parent && keyProblem) return { message: `request ${root} is invalid`, detail: { path: pathOf(visit.parent), message: keyProblem } };
    const { value: v } = visit;
    if (typeof v === 'string') {
      const problem = textProblem(v);
      if (problem) return { message: `request ${root} is invalid`, detail: { path: pathOf(visit), message: problem } };
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    if (visit.depth === MAX_INPUT_DEPTH) {
      // Said of the whole part: the path down to the limit would be 64 keys long.
      return {
        message: `request ${root} nests objects and arrays more than ${MAX_INPUT_DEPTH} levels deep`,
        detail: { path: root, message: `must not nest objects and arrays more than ${MAX_INPUT_DEPTH} levels deep` },
      };
    }
    const entries = Object.entries(v);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, inner] = entries[i]!;
      stack.push({ value: inner, key, depth: visit.depth + 1, parent: visit });
    }
  }
  return undefined;
}

/**
 * Whether the query of `url`, percent-decoded, is UTF-8: the query parser turns what is not
 * into U+FFFD, text the client never sent. Bytes outside ASCII are refused unencoded (Node's
 * parser refuses them already; this does not rely on it); path parameters that are not
 * UTF-8 are refused by the router.
 */
function queryIsUtf8(url: string): boolean {
  const at = url.indexOf('?');
  if (at < 0) return true;
  if (!isAscii(Buffer.from(url.slice(at), 'utf8'))) return false;
  if (!url.includes('%', at)) return true;
  const bytes = Buffer.from(url.slice(at + 1).replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1');
  return isUtf8(bytes);
}

/**
 * The parser of a route's request parts: first what no schema is asked about (depth, NUL,
 * surrogates), then the part's schema. A query is also held to `strictQuery`, when given.
 */
function partParser(strictQuery: z.ZodType | undefined): PartParser {
  return (where, schema, value) => {
    const strict = where === 'query' ? strictQuery : undefined;
    if (!schema && !strict) return undefined;
    const name = where === 'params' ? 'path' : where;
    const problem = inputProblem(value, name);
    if (problem) throw new AppError('invalid_request', problem.message, { details: [problem.detail] });
    // Unknown parameters are refused in the strict schema's words; the route's schema then gives the values.
    const known = strict?.safeParse(value);
    if (known && !known.success) throw new AppError('invalid_request', `request ${name} is invalid`, { details: zodDetails(name, known.error) });
    if (!schema) return undefined;
    const parsed = schema.safeParse(value ?? (where === 'body' ? {} : value));
    if (!parsed.success) throw new AppError('invalid_request', `request ${name} is invalid`, { details: zodDetails(name, parsed.error) });
    return parsed.data;
  };
}

function principalOf(auth: AuthContext): string {
  switch (auth.kind) {
    case 'api_key':
      return `key:${auth.key_id}`;
    case 'user':
      return `user:${auth.user_id}`;
    case 'admin':
      return `admin:${auth.admin_key_id}`;
    default:
      return 'anonymous';
  }
}

export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', deps.trustProxy);
  const json = express.json({ limit: deps.bodyLimitBytes, strict: true, type: ['application/json', 'application/*+json'], verify: requireUtf8 });
  // Signed payloads are checked over their exact bytes; SNS sends JSON as text/plain.
  const text = express.text({ limit: deps.bodyLimitBytes, type: () => true, verify: requireUtf8 });
  // Browsers' form posts (the SAML HTTP-POST binding): flat fields, no nested syntax.
  const form = express.urlencoded({ limit: deps.bodyLimitBytes, extended: false, type: 'application/x-www-form-urlencoded', verify: requireUtf8 });

  const measured = httpServerMetrics();
  app.use((req, res, next) => {
    measured?.started(res);
    const incoming = req.get('x-request-id');
    const requestId = incoming && REQUEST_ID.test(incoming) ? incoming : newId('request');
    // With telemetry on, the request's trace is the OTel one (its server span, which honoured the
    // client's traceparent), and the logger's mixin puts its ids on every line; off, the client's or a new one.
    const traced = activeTraceparent();
    // The HTTP server span is the gateway's (its service.name, also in the all-in-one).
    if (traced) claimActiveSpan('gateway');
    const traceparent = traced ?? validTraceparent(req.get('traceparent')) ?? newTraceparent();
    // Made on first use: a child logger per request is not free and most requests log nothing.
    let log: Logger | undefined;
    const locals: Locals = {
      requestId,
      traceparent,
      get log() {
        return (log ??= deps.log.child(traced ? { request_id: requestId } : { request_id: requestId, trace_id: traceparent.slice(3, 35) }));
      },
    };
    res.locals.mr = locals;
    res.setHeader('x-request-id', requestId);
    res.setHeader('cache-control', 'no-store');
    if (deps.log.isLevelEnabled('debug')) {
      const started = process.hrtime.bigint();
      res.on('finish', () => {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        locals.log.debug({ method: req.method, path: req.path, status: res.statusCode, ms: Math.round(ms * 10) / 10 }, 'request');
      });
    }
    next();
  });

  // What Node's server would refuse with a bare status line (see main.ts), refused here in the error shape.
  app.use((req, res, next) => {
    if (req.httpVersion === '1.1' && req.headers.host === undefined) {
      sendError(res, new AppError('invalid_request', 'an HTTP/1.1 request must carry a Host header'), locals(res).requestId);
      return;
    }
    const expect = req.headers.expect;
    if (req.httpVersion === '1.1' && expect !== undefined && !CONTINUE.test(expect)) {
      sendError(res, new AppError('expectation_failed', 'the Expect header is not supported but for 100-continue'), locals(res).requestId);
      return;
    }
    next();
  });

  app.get('/api/v1/openapi.json', (_req, res) => {
    res.json(deps.openapi);
  });

  for (const route of deps.routes) {
    const access = accessOf(route);
    const handler = route.op ? routeHandler(route, access, deps) : pendingHandler(route, deps);
    const chain: RequestHandler[] = route.upload ? [handler] : route.textBody ? [text, handler] : route.formBody ? [requireForm(route), form, handler] : route.body ? [requireJson(route), json, handler] : [handler];
    for (const path of [route.path, ...(route.aliases ?? [])]) app[route.method](expressPath(path), ...chain);
  }

  // Nothing matched: a known path with another method is 405, anything else 404.
  const patterns = deps.routes.flatMap((r) => [r.path, ...(r.aliases ?? [])].map((p) => ({ re: pathPattern(p), method: r.method })));
  patterns.push({ re: /^\/api\/v1\/openapi\.json$/, method: 'get' });
  app.use((req, res) => {
    const allowed = [...new Set(patterns.filter((p) => p.re.test(req.path)).map((p) => p.method.toUpperCase()))];
    if (allowed.length) {
      res.setHeader('Allow', allowed.join(', '));
      sendError(res, new AppError('method_not_allowed', `${req.method} is not allowed on ${req.path}; allowed: ${allowed.join(', ')}`), locals(res).requestId);
      return;
    }
    sendError(res, new AppError('route_not_found', `no route for ${req.method} ${req.path}`), locals(res).requestId);
  });

  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const appErr = fromMiddlewareError(err, deps.bodyLimitBytes);
    const l = locals(res);
    if (appErr.code === 'internal_error') (l?.log ?? deps.log).error({ err }, 'request failed');
    sendError(res, appErr, l?.requestId ?? 'unknown');
  });
  return app;
}

/**
 * A body declared UTF-8 (the default) must be UTF-8: decoding would turn each bad byte into
 * U+FFFD and store text the client never sent. body-parser answers what this throws with
 * its status; fromMiddlewareError maps its type.
 */
function requireUtf8(_req: unknown, _res: unknown, body: Buffer, encoding: string | null): void {
  if (encoding?.toLowerCase() !== 'utf-8' && encoding?.toLowerCase() !== 'utf8') return;
  if (!isUtf8(body)) throw Object.assign(new Error('request body is not valid UTF-8'), { status: 400, type: BODY_NOT_UTF8 });
}

function requireJson(route: Route): RequestHandler {
  return (req, res, next) => {
    const length = Number(req.headers['content-length'] ?? (req.headers['transfer-encoding'] ? NaN : 0));
    if ((length > 0 || Number.isNaN(length)) && !req.is(['application/json', 'application/*+json'])) {
      sendError(res, new AppError('unsupported_media_type', `${route.method.toUpperCase()} ${route.path} takes Content-Type: application/json`), locals(res).requestId);
      return;
    }
    next();
  };
}

function requireForm(route: Route): RequestHandler {
  return (req, res, next) => {
    if (!req.is('application/x-www-form-urlencoded')) {
      sendError(res, new AppError('unsupported_media_type', `${route.method.toUpperCase()} ${route.path} takes Content-Type: application/x-www-form-urlencoded`), locals(res).requestId);
      return;
    }
    next();
  };
}

/** A route that takes no query parameters refuses any. */
const NO_QUERY = z.strictObject({});

/**
 * A route's query schema, refusing parameters it does not define: a misspelt filter or a
 * cursor parameter of another API (`?starting_after=`) must not be silently ignored, or a
 * client pages or filters on something that is not applied.
 */
function strictQuery(schema: z.ZodType | undefined): z.ZodType {
  if (!schema) return NO_QUERY;
  return schema instanceof z.ZodObject ? schema.strict() : schema;
}

/**
 * A route whose operation does not exist yet answers 501, but a credential it would never
 * take (a tenant's on an admin route) is refused first, as it will be once the route exists.
 */
function pendingHandler(route: PendingRoute, deps: AppDeps): RequestHandler {
  const pending = () => new AppError('not_implemented', `${route.method.toUpperCase()} ${route.path} is not available yet`);
  return async (req, res) => {
    const { requestId, traceparent } = locals(res);
    const refusal = await deps.authenticator.authenticate(route.auth, req.get('authorization'), undefined, { requestId, traceparent }).then(
      () => pending(),
      (err: unknown) => (err instanceof AppError && err.code !== 'not_implemented' ? err : pending()),
    );
    sendError(res, refusal, requestId);
  };
}

/** The handler of a route of `Op`: the request its parts make is `Op`'s, so the call is typed end to end. */
function routeHandler<Op extends RpcName>(route: OpRoute<Op>, access: RouteAccess, deps: AppDeps): RequestHandler {
  // A provider's callback (auth 'signature') is called at the URL an operator subscribed, query and all.
  const parse = partParser(route.auth === 'signature' ? undefined : strictQuery(route.query));
  return async (req, res) => {
    const l = locals(res);
    const { requestId, traceparent } = l;
    const ip = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    const base: Omit<CallContext, 'auth'> = { requestId, traceparent, client: { ip, userAgent: req.get('user-agent') } };
    try {
      let auth: AuthContext;
      if (route.auth === 'signature') {
        auth = { kind: 'anonymous' };
      } else if (route.auth === 'none') {
        await limit(deps.anonymousLimiter, `ip:${ip}`);
        auth = { kind: 'anonymous' };
      } else {
        try {
          auth = await deps.authenticator.authenticate(route.auth, req.get('authorization'), req.get('x-env-id'), base);
        } catch (err) {
          // Failed credentials count against the client's address, so guessing is slow.
          if (err instanceof AppError && (err.code === 'unauthorized' || err.code === 'token_expired')) await limit(deps.anonymousLimiter, `ip:${ip}`);
          throw err;
        }
        await limit(deps.limiter, principalOf(auth));
        // The permission table, before the request is read: a caller without the power learns nothing of the input's rules.
        if (access !== 'public' && access !== 'self' && access !== 'admin') authorize(auth, access);
      }
      if (!queryIsUtf8(req.originalUrl)) {
        throw new AppError('invalid_request', 'request query is invalid', { details: [{ path: 'query', message: 'must be UTF-8 once percent-decoded' }] });
      }
      if (route.upload) {
        // Checked before the bytes are read: a bad file name costs the client no upload.
        parse('query', route.query, req.query);
        const received = await receiveUpload(req, deps.uploads.bucket, deps.uploads.maxBytes);
        const input = route.request(parse, { params: req.params, query: req.query, body: received });
        const result = await deps.rpc.call(route.op, input, { ...base, auth }, { timeoutMs: deps.rpcTimeoutMs }).catch(async (err: unknown) => {
          await deps.uploads.bucket.delete(received.object).catch(() => undefined);
          throw err;
        });
        respond(res, route.status ?? 200, result);
        return;
      }
      if (route.signedLink) {
        let target: LinkTarget;
        try {
          target = deps.links.verify(String(req.params.token));
        } catch (err) {
          // Guessing links is slow, as guessing credentials is.
          await limit(deps.anonymousLimiter, `ip:${ip}`);
          throw err;
        }
        await limit(deps.limiter, `link:${target.org_id}:${target.env_id}`);
        const input = route.request(parse, { params: { inbox_id: target.inbox_id, message_id: target.message_id, attachment_id: target.attachment_id }, query: undefined, body: undefined });
        const linkAuth: AuthContext = { kind: 'link', org_id: target.org_id, env_id: target.env_id };
        const result = downloadSchema.parse(await deps.rpc.call(route.op, input, { ...base, auth: linkAuth }, { timeoutMs: deps.rpcTimeoutMs }));
        await sendDownload(res, deps.buckets, result, { startMs: DOWNLOAD_START_MS, idleMs: DOWNLOAD_IDLE_MS });
        return;
      }
      const input = route.request(parse, { params: req.params, query: req.query, body: req.body });
      if (route.browserBinding) {
        const secret = route.browserBinding === 'start' ? bindBrowser(req, res) : boundSecret(req);
        if (secret !== undefined) Object.assign(input as object, { browser_binding: secret });
      }
      const call: CallContext = { ...base, auth };
      const idemKey = route.idempotent ? req.get('idempotency-key') : undefined;
      if (route.download) {
        const result = downloadSchema.parse(await deps.rpc.call(route.op, input, call, { timeoutMs: deps.rpcTimeoutMs }));
        await sendDownload(res, deps.buckets, result, { startMs: DOWNLOAD_START_MS, idleMs: DOWNLOAD_IDLE_MS });
        return;
      }
      if (route.textResponse) {
        const doc = textDocument.parse(await deps.rpc.call(route.op, input, call, { timeoutMs: deps.rpcTimeoutMs }));
        res.status(route.status ?? 200).type(doc.content_type).send(doc.text);
        return;
      }
      // Files given by URL are fetched and registered as uploads, after an Idempotency-Key's replay check.
      const ready = (request: typeof input) =>
        route.urlAttachments
          ? withUrlAttachments(request, async (a, where) => {
              const received = await fetchAttachment(deps.urlAttachments.fetch, deps.uploads.bucket, deps.uploads.maxBytes, deps.urlAttachments.timeoutMs, a, where);
              return deps.rpc.call('mailbox.upload.register', received, call, { timeoutMs: deps.rpcTimeoutMs });
            })
          : Promise.resolve(request);
      if (idemKey === undefined) {
        const result = await deps.rpc.call(route.op, await ready(input), call, { timeoutMs: deps.rpcTimeoutMs });
        if (auth.kind === 'user' && endsCallersSession(route, req.params, auth.session_id)) deps.authenticator.sessionEnded(auth.session_id);
        respond(res, route.status ?? 200, route.downloadLinks ? linked(route.downloadLinks, result, auth, req, deps) : result);
        return;
      }
      IdempotencyStore.validateKey(idemKey);
      const claim = await deps.idempotency.claim(
        `${principalOf(auth)}:${auth.kind === 'user' || auth.kind === 'api_key' ? auth.env_id : ''}`,
        idemKey,
        `${route.method} ${route.path} ${JSON.stringify(req.params)} ${JSON.stringify(req.body ?? null)}`,
      );
      if (claim.kind === 'replay') {
        res.setHeader('Idempotent-Replayed', 'true');
        respond(res, claim.status, claim.body);
        return;
      }
      try {
        const result = await deps.rpc.call(route.op, await ready(input), { ...call, requestKey: claim.key }, { timeoutMs: deps.rpcTimeoutMs });
        await claim.commit(route.status ?? 200, result);
        respond(res, route.status ?? 200, result);
      } catch (err) {
        const appErr = err instanceof AppError ? err : undefined;
        // A refusal for rate is over in a minute: the same key sent again then is a new try, not a replay.
        if (appErr && appErr.status < 500 && appErr.code !== 'rate_limited') {
          await claim.commit(appErr.status, { error: { code: appErr.code, message: appErr.message, ...(appErr.details ? { details: appErr.details } : {}) } });
        } else {
          await claim.release().catch(() => {});
        }
        throw err;
      }
    } catch (err) {
      const appErr = err instanceof AppError ? err : new AppError('internal_error', 'internal error', { cause: err });
      if (appErr.code === 'internal_error') l.log.error({ err, op: route.op }, 'request failed');
      else if (appErr.status >= 500) l.log.warn({ code: appErr.code, op: route.op, msg: appErr.message }, 'dependency failure');
      sendError(res, appErr, requestId);
    }
  };
}

/** A message read (one message, or a thread's) with its signed download links, for the tenant that read it. */
function linked(what: 'message' | 'thread', result: unknown, auth: AuthContext, req: Request, deps: AppDeps): unknown {
  if (!isTenant(auth)) return result;
  const tenant = { org_id: auth.org_id, env_id: auth.env_id };
  const base = deps.publicUrl || `${req.protocol}://${req.get('host') ?? 'localhost'}`;
  if (what === 'message') return withDownloadLinks(messageSchema.parse(result), tenant, deps.links, base);
  const thread = threadWithMessages.parse(result);
  return { ...thread, messages: thread.messages.map((m) => withDownloadLinks(m, tenant, deps.links, base)) };
}

/** Whether the route, having succeeded, ended the caller's own session. */
function endsCallersSession(route: Pick<Route, 'endsSession'>, params: Record<string, string | string[]>, sessionId: string): boolean {
  const ends = route.endsSession;
  return ends === true || (ends !== undefined && params[ends.param] === sessionId);
}

async function limit(limiter: RateLimiter, key: string): Promise<void> {
  const take = await limiter.take(key);
  if (!take.ok) throw new AppError('rate_limited', `too many requests; retry after ${take.retryAfterSeconds} s`, { retryAfterSeconds: take.retryAfterSeconds });
}

function respond(res: Response, status: number, body: unknown): void {
  if (status === 204) {
    res.status(204).end();
    return;
  }
  // A replayed error keeps its shape; give it this request's id.
  if (status >= 400 && typeof body === 'object' && body !== null && 'error' in body) {
    const e = (body as { error: Record<string, unknown> }).error;
    res.status(status).json({ error: { ...e, request_id: locals(res).requestId } });
    return;
  }
  res.status(status).json(body);
}
