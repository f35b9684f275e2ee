import { headers as natsHeaders, type MsgHdrs } from '@nats-io/transport-node';
import { authContext, HEADERS, ANONYMOUS, type AuthContext } from '@mailroom/contracts';

export interface CallContext {
  auth: AuthContext;
  requestId: string;
  /** W3C traceparent of the caller, passed through when OpenTelemetry is off. */
  traceparent?: string | undefined;
  /** The end client, as the gateway saw it (for session records and audit). */
  client?: { ip?: string | undefined; userAgent?: string | undefined } | undefined;
}

const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

export function validTraceparent(value: string | undefined | null): string | undefined {
  return value && TRACEPARENT.test(value) ? value : undefined;
}

export function traceIdOf(traceparent: string | undefined): string | undefined {
  return traceparent?.slice(3, 35);
}

export function toHeaders(ctx: CallContext): MsgHdrs {
  const h = natsHeaders();
  h.set(HEADERS.requestId, ctx.requestId);
  h.set(HEADERS.auth, JSON.stringify(ctx.auth));
  if (ctx.traceparent) h.set(HEADERS.traceparent, ctx.traceparent);
  if (ctx.client?.ip) h.set(HEADERS.clientIp, ctx.client.ip);
  if (ctx.client?.userAgent) h.set(HEADERS.userAgent, ctx.client.userAgent.replace(/[\r\n]/g, ' ').slice(0, 512));
  return h;
}

/** Reads the call context of a received request; an unparseable auth header counts as anonymous. */
export function fromHeaders(h: MsgHdrs | undefined): CallContext {
  const requestId = h?.get(HEADERS.requestId) || 'unknown';
  let auth: AuthContext = ANONYMOUS;
  const raw = h?.get(HEADERS.auth);
  if (raw) {
    try {
      const parsed = authContext.safeParse(JSON.parse(raw));
      if (parsed.success) auth = parsed.data;
    } catch {
      // stays anonymous
    }
  }
  return {
    auth,
    requestId,
    traceparent: validTraceparent(h?.get(HEADERS.traceparent)),
    client: { ip: h?.get(HEADERS.clientIp) || undefined, userAgent: h?.get(HEADERS.userAgent) || undefined },
  };
}
