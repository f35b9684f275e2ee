/**
 * The SMTP edge's spans. A session is a span from connect to close; each message (MAIL FROM
 * to the answer to its DATA) is the root of a trace of its own, linked to its session, so
 * one inbound mail is one trace however many a session carries: its recipients' lookups,
 * its acceptance and its hand-over to mailbox (the mail.inbound publish) are its children.
 * Attributes are the peer's address, counts, sizes and reply codes: no address of a
 * sender or recipient, no header, no body.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import { moduleContext } from '@mailroom/platform';

const tracer = trace.getTracer('@mailroom/mail-ingest');
/** Where a session's and a message's spans start: no parent, mail-ingest's service.name. */
const edge = (): Context => moduleContext('mail-ingest', ROOT_CONTEXT);

interface Traced {
  session: Span;
  message?: { span: Span; ctx: Context } | undefined;
}

export class SmtpTraces {
  private readonly sessions = new Map<string, Traced>();

  sessionStarted(id: string, peer: { address: string; port: number }): void {
    const session = tracer.startSpan(
      'smtp session',
      { kind: SpanKind.SERVER, attributes: { 'network.protocol.name': 'smtp', 'network.peer.address': peer.address, 'network.peer.port': peer.port } },
      edge(),
    );
    // No span (telemetry off): nothing is kept per session.
    if (session.isRecording()) this.sessions.set(id, { session });
  }

  sessionEnded(id: string): void {
    const traced = this.sessions.get(id);
    if (!traced) return;
    this.sessions.delete(id);
    this.messageEnded(id, { outcome: 'abandoned' });
    traced.session.end();
  }

  /** A new message at MAIL FROM (ending one left unfinished, after RSET say): its context, for what it does. */
  messageStarted(id: string): Context {
    const traced = this.sessions.get(id);
    if (!traced) return ROOT_CONTEXT;
    this.messageEnded(id, { outcome: 'abandoned' });
    const span = tracer.startSpan(
      'smtp message',
      { kind: SpanKind.SERVER, attributes: { 'network.protocol.name': 'smtp' }, links: [{ context: traced.session.spanContext() }] },
      edge(),
    );
    const ctx = trace.setSpan(edge(), span);
    traced.message = { span, ctx };
    return ctx;
  }

  /** The context of the session's message in progress (the root when none, or telemetry off). */
  messageContext(id: string): Context {
    return this.sessions.get(id)?.message?.ctx ?? ROOT_CONTEXT;
  }

  messageEnded(id: string, end: { outcome: 'accepted' | 'refused' | 'abandoned'; code?: number; recipients?: number; bytes?: number }): void {
    const traced = this.sessions.get(id);
    const message = traced?.message;
    if (!traced || !message) return;
    traced.message = undefined;
    message.span.setAttributes({
      'mailroom.smtp.outcome': end.outcome,
      ...(end.code ? { 'smtp.response.code': end.code } : {}),
      ...(end.recipients !== undefined ? { 'mailroom.smtp.recipients': end.recipients } : {}),
      ...(end.bytes !== undefined ? { 'messaging.message.body.size': end.bytes } : {}),
    });
    if (end.code && end.code >= 400) message.span.setStatus({ code: SpanStatusCode.ERROR, message: String(end.code) });
    message.span.end();
  }
}
