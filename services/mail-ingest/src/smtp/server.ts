/**
 * The SMTP edge (smtp-server). Decisions live in the domain modules; this file connects
 * them to the protocol: limits at connect and MAIL FROM, recipients at RCPT, the DATA
 * scanner (size, bare line endings), and acceptance. Replies carry our own enhanced status
 * codes (smtp-server would map every 550 to 5.1.1).
 */
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { context } from '@opentelemetry/api';
import type { Logger } from '@mailroom/platform';
import type { Acceptance } from '../domain/acceptance';
import type { DataScanner } from '../domain/data-scanner';
import type { ConnectionLimiter, MessageRateLimiter } from '../domain/limits';
import type { Recipient, RecipientResolver } from '../domain/recipients';
import { REPLIES, SmtpReply } from '../domain/replies';
import { SmtpMetrics, type SmtpStage } from './metrics';
import { SmtpTraces } from './tracing';

export interface SmtpEdgeOptions {
  port: number;
  host: string;
  /** Our name in the greeting and EHLO. */
  hostname: string;
  maxBytes: number;
  maxRecipients: number;
  maxClients: number;
  socketTimeoutMs: number;
  tls?: { key: Buffer; cert: Buffer } | undefined;
}

export interface SmtpEdgeDeps {
  connections: ConnectionLimiter;
  rate: MessageRateLimiter;
  recipients: RecipientResolver;
  acceptance: Acceptance;
  scanner: (maxBytes: number) => DataScanner;
  log: Logger;
}

export interface SmtpEdge {
  server: SMTPServer;
  port: number;
  /** Stops accepting, lets transactions in flight finish, then ends stragglers with 421. */
  close(): Promise<void>;
}

function replyText(name: keyof typeof REPLIES): string {
  const r = REPLIES[name];
  return `${r.enhanced} ${r.text}`;
}

export async function startSmtpEdge(opts: SmtpEdgeOptions, deps: SmtpEdgeDeps): Promise<SmtpEdge> {
  const { log } = deps;
  const counted = new Set<string>(); // sessions holding a connection slot
  const recipients = new Map<string, Recipient[]>(); // per session, for the current transaction
  const traces = new SmtpTraces();
  const measured = new SmtpMetrics();
  /** Answers the end of DATA, and ends the message's span with the answer. */
  const answer = (session: SMTPServerSession, callback: (err?: Error | null, message?: string) => void, bytes: number, result: SmtpReply | { reply: string; spam: 'ham' | 'spam' | 'unscanned' }) => {
    const rcpts = recipients.get(session.id)?.length ?? 0;
    if (result instanceof SmtpReply) {
      traces.messageEnded(session.id, { outcome: 'refused', code: result.responseCode, recipients: rcpts, bytes });
      measured.refused('data', result.reply);
      callback(result);
    } else {
      traces.messageEnded(session.id, { outcome: 'accepted', code: 250, recipients: rcpts, bytes });
      measured.accepted(result.spam);
      callback(null, result.reply);
    }
  };
  /** A refusal before DATA, counted by its stage and reason. */
  const refuse = (stage: SmtpStage, reply: SmtpReply): SmtpReply => (measured.refused(stage, reply.reply), reply);

  const server: SMTPServer = new SMTPServer({
    name: opts.hostname,
    banner: 'Mailroom ESMTP',
    size: opts.maxBytes,
    maxClients: opts.maxClients,
    socketTimeout: opts.socketTimeoutMs,
    closeTimeout: 10_000,
    authOptional: true,
    disabledCommands: opts.tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    hideSTARTTLS: !opts.tls,
    hideENHANCEDSTATUSCODES: true,
    // A PTR lookup per connection costs a DNS round trip (seconds when DNS is slow) and
    // decides nothing here; rspamd does its own reverse check from the IP we pass it.
    disableReverseLookup: true,
    logger: false,
    ...(opts.tls ? { key: opts.tls.key, cert: opts.tls.cert } : {}),

    onConnect(session, callback) {
      if (!deps.connections.acquire(session.remoteAddress)) {
        measured.session(false);
        return callback(new SmtpReply('tooManyConnections'));
      }
      measured.session(true);
      counted.add(session.id);
      traces.sessionStarted(session.id, { address: session.remoteAddress, port: session.remotePort });
      callback();
    },

    onClose(session) {
      if (counted.delete(session.id)) deps.connections.release(session.remoteAddress);
      recipients.delete(session.id);
      traces.sessionEnded(session.id);
    },

    onMailFrom(_address, session, callback) {
      recipients.set(session.id, []);
      const traced = traces.messageStarted(session.id);
      context.with(traced, () => deps.rate.take(session.remoteAddress)).then(
        (ok) => (ok ? callback() : callback(refuse('mail', new SmtpReply('rateLimited')))),
        () => callback(refuse('mail', new SmtpReply('tryLater'))),
      );
    },

    onRcptTo(address, session, callback) {
      const list = recipients.get(session.id) ?? [];
      if (list.length >= opts.maxRecipients) return callback(refuse('rcpt', new SmtpReply('tooManyRecipients')));
      context.with(traces.messageContext(session.id), () => deps.recipients.resolve(address.address)).then(
        (rcpt) => {
          list.push(rcpt);
          recipients.set(session.id, list);
          callback();
        },
        (err: unknown) => callback(refuse('rcpt', err instanceof SmtpReply ? err : new SmtpReply('tryLater'))),
      );
    },

    onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback) {
      const scanner = deps.scanner(opts.maxBytes);
      let refused = false;
      stream.on('data', (chunk: Buffer) => {
        if (refused || scanner.push(chunk)) return;
        // Over the limit: answer now and hang up rather than read (and discard) the rest.
        refused = true;
        traces.messageEnded(session.id, { outcome: 'refused', code: 552, bytes: scanner.size });
        measured.refused('data', 'tooBig');
        log.info({ ip: session.remoteAddress, bytes: scanner.size }, 'message over the size limit: 552 and close');
        for (const connection of server.connections) {
          if (connection.id === session.id) {
            connection.send(552, replyText('tooBig'));
            connection.close();
          }
        }
        stream.destroy();
      });
      stream.on('end', () => {
        if (refused) return;
        const bytes = scanner.size;
        if (scanner.bareLineEnding) return answer(session, callback, bytes, new SmtpReply('bareLineEnding'));
        // Nothing between DATA and its end: no message to store (the inbox would refuse it later, after a 250).
        if (scanner.size === 0) return answer(session, callback, bytes, new SmtpReply('emptyMessage'));
        const rcpts = recipients.get(session.id) ?? [];
        if (!rcpts.length) return answer(session, callback, bytes, new SmtpReply('noRecipients'));
        context
          .with(traces.messageContext(session.id), () =>
            deps.acceptance.accept(scanner.message(), {
              ip: session.remoteAddress,
              helo: session.hostNameAppearsAs ?? '',
              tls: session.secure,
              mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              recipients: rcpts,
            }, log),
          )
          .then(
            (accepted) => answer(session, callback, bytes, { reply: `2.0.0 Ok: queued as ${accepted.rawId}`, spam: accepted.spam.verdict }),
            (err: unknown) => {
              if (!(err instanceof SmtpReply)) log.error({ err }, 'acceptance failed: answering 451');
              answer(session, callback, bytes, err instanceof SmtpReply ? err : new SmtpReply('tryLater'));
            },
          );
      });
    },
  });

  server.on('error', (err) => log.warn({ err }, 'smtp connection error'));
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  return {
    server,
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
