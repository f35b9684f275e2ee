import { headers as natsHeaders, type MsgHdrs } from '@nats-io/transport-node';
import { authContext, HEADERS, ANONYMOUS, type AuthContext } from '@mailroom/contracts';
import type { ContextSeal } from './context-seal';

export interface CallContext {
  auth: AuthContext;
  requestId: string;
  /** W3C traceparent of the caller, passed through when OpenTelemetry is off. */
  traceparent?: string | undefined;
  /** The end client, as the gateway saw it (for session records and audit). */
  client?: { ip?: string | undefined; userAgent?: string | undefined } | undefined;
  /** The gateway's key of the request's Idempotency-Key (64 hex), the same on every retry. */
  requestKey?: string | undefined;
}

const REQUEST_KEY = /^[0-9a-f]{64}$/;

const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

export function validTraceparent(value: string | undefined | null): string | undefined {
  return value && TRACEPARENT.test(value) ? value : undefined;
}

export function traceIdOf(traceparent: string | undefined): string | undefined {
  return traceparent?.slice(3, 35);
}

/**
 * The kinds that act for a tenant or an administrator: sealed by the gateway and, where a bus
 * trusts a key, honoured only when sealed. Anonymous and service contexts are not: which
 * service may publish on which rpc subject is for NATS permissions to say.
 */
export type SealedKind = 'user' | 'api_key' | 'admin' | 'link';
const SEALED_KINDS: ReadonlySet<string> = new Set<SealedKind>(['user', 'api_key', 'admin', 'link']);

function isSealedKind(kind: AuthContext['kind']): kind is SealedKind {
  return SEALED_KINDS.has(kind);
}

/** A bus's seal and the subject (namespaced, as on the wire) a request is published or received on. */
export interface SealOn {
  seal: ContextSeal;
  subject: string;
}

export function toHeaders(ctx: CallContext, sealOn?: SealOn): MsgHdrs {
  const h = natsHeaders();
  h.set(HEADERS.requestId, ctx.requestId);
  const authJson = JSON.stringify(ctx.auth);
  h.set(HEADERS.auth, authJson);
  if (sealOn && isSealedKind(ctx.auth.kind)) {
    const seal = sealOn.seal.sign(sealOn.subject, authJson);
    if (seal) h.set(HEADERS.authSeal, seal);
  }
  if (ctx.traceparent) h.set(HEADERS.traceparent, ctx.traceparent);
  if (ctx.client?.ip) h.set(HEADERS.clientIp, ctx.client.ip);
  if (ctx.client?.userAgent) h.set(HEADERS.userAgent, ctx.client.userAgent.replace(/[\r\n]/g, ' ').slice(0, 512));
  if (ctx.requestKey && REQUEST_KEY.test(ctx.requestKey)) h.set(HEADERS.requestKey, ctx.requestKey);
  return h;
}

/** The call context of a received request, and what was refused on the way. */
export interface ReadCall {
  call: CallContext;
  /** A context of this kind came without a valid seal from a trusted key: the call is anonymous. */
  refused?: { kind: SealedKind; seal: 'missing' | 'invalid' };
}

/**
 * Reads the call context of a received request; an unparseable auth header counts as
 * anonymous, and so does a tenant or admin context not sealed for this subject when the
 * bus's seal trusts some key.
 */
export function readCall(h: MsgHdrs | undefined, sealOn?: SealOn): ReadCall {
  const requestId = h?.get(HEADERS.requestId) || 'unknown';
  let auth: AuthContext = ANONYMOUS;
  let refused: ReadCall['refused'];
  const raw = h?.get(HEADERS.auth);
  if (raw) {
    try {
      const parsed = authContext.safeParse(JSON.parse(raw));
      if (parsed.success) auth = parsed.data;
    } catch {
      // stays anonymous
    }
    if (sealOn?.seal.verifies && isSealedKind(auth.kind)) {
      // The signature covers the header's exact text, not the parsed context.
      const seal = h?.get(HEADERS.authSeal) || undefined;
      if (!sealOn.seal.verify(sealOn.subject, raw, seal)) {
        refused = { kind: auth.kind, seal: seal ? 'invalid' : 'missing' };
        auth = ANONYMOUS;
      }
    }
  }
  const call: CallContext = {
    auth,
    requestId,
    traceparent: validTraceparent(h?.get(HEADERS.traceparent)),
    client: { ip: h?.get(HEADERS.clientIp) || undefined, userAgent: h?.get(HEADERS.userAgent) || undefined },
  };
  const requestKey = h?.get(HEADERS.requestKey);
  if (requestKey && REQUEST_KEY.test(requestKey)) call.requestKey = requestKey;
  return refused ? { call, refused } : { call };
}
