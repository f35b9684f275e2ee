/**
 * The hand-over to the provider as a client span (issue 33: a reply is one trace from the API
 * call to the provider's acceptance): `<provider> send` (`smtp send`, `ses send`), the child of
 * whatever is active (the `mail.outbound` work item's handling, in the API call's trace),
 * ending when the provider answers (an SMTP relay's 250 to DATA, SES's response). Attributes:
 * the provider's address and port, our message id, counts; never an address, a header or the
 * body. The traceparent of the span comes back with the acceptance, so the send's record keeps
 * it and the reports that come back later (DSNs, complaints) link to it. With telemetry off the
 * API is a no-op: no span, no traceparent.
 */
import { SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import { traceparentOf } from '@mailroom/messaging';
import { ProviderError, type Accepted, type HandOver, type MailProvider } from './provider';

const tracer = trace.getTracer('@mailroom/mail-send');

/** Where a provider sends to: the `server.address`/`server.port` of its span. */
export interface ProviderServer {
  address: string;
  port: number;
}

const DEFAULT_PORTS: Record<string, number> = { 'smtp:': 25, 'smtps:': 465, 'http:': 80, 'https:': 443 };

/** The server a provider's URL names (an SMTP relay's smtp(s)://, SES's https:// endpoint); no credentials kept. */
export function providerServer(url: string): ProviderServer {
  const u = new URL(url);
  return { address: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port || DEFAULT_PORTS[u.protocol] || 0) };
}

/** The span context a stored traceparent names (for a link); undefined when it names none or telemetry is off. */
export function spanContextOf(traceparent: string | null | undefined) {
  if (!traceparent) return undefined;
  return trace.getSpanContext(propagation.extract(context.active(), { traceparent }));
}

/**
 * Links the active span (a report's processing) to the hand-over of the message it reports on,
 * from the traceparent kept with the send: the report arrives in a trace of its own (the mail
 * that carried it), and the link leads from there to the reply's trace.
 */
export function linkToSent(traceparent: string | null | undefined): void {
  const sent = spanContextOf(traceparent);
  if (sent) trace.getActiveSpan()?.addLink({ context: sent, attributes: { 'mailroom.link': 'sent message' } });
}

export class TracedProvider implements MailProvider {
  readonly name: string;

  constructor(
    private readonly provider: MailProvider,
    private readonly server: ProviderServer,
  ) {
    this.name = provider.name;
  }

  async send(message: HandOver): Promise<Accepted> {
    const span = tracer.startSpan(`${this.name} send`, {
      kind: SpanKind.CLIENT,
      attributes: {
        'server.address': this.server.address,
        'server.port': this.server.port,
        'mailroom.provider': this.name,
        'mailroom.message.id': message.envelopeId,
        'mailroom.send.recipient_count': message.to.length,
      },
    });
    const ctx = trace.setSpan(context.active(), span);
    try {
      const accepted = await context.with(ctx, () => this.provider.send(message));
      span.setAttribute('mailroom.send.rejected_count', accepted.rejected.length);
      const traceparent = traceparentOf(ctx);
      return traceparent ? { ...accepted, traceparent } : accepted;
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.setAttribute('error.type', err instanceof ProviderError ? (err.temporary ? 'temporary' : 'permanent') : err instanceof Error ? err.name : 'error');
      throw err;
    } finally {
      span.end();
    }
  }

  close(): Promise<void> {
    return this.provider.close();
  }
}
