/** Structured logs (pino) with secrets redacted wherever they appear in a logged object. */
import { context, isSpanContextValid, trace } from '@opentelemetry/api';
import pino, { type Logger } from 'pino';

export type { Logger };

const SECRET_KEYS = [
  'password',
  'new_password',
  'current_password',
  'token',
  'access_token',
  'refresh_token',
  'authorization',
  'cookie',
  'secret',
  'key',
  'private_key',
  'api_key',
  'text_body',
  'html_body',
  'raw',
  // What a parser refused, as given: Node's "Invalid URL" keeps the whole URL here (a
  // DATABASE_URL whose password has a '/' in it, say), and pino's error serializer copies it.
  'input',
  // The second factor: a login's mfa_token, recovery codes, and the key URI of an enrolment (it holds the secret).
  'mfa_token',
  'recovery_codes',
  'otpauth_uri',
];

export const REDACT_PATHS = [
  ...SECRET_KEYS,
  ...SECRET_KEYS.map((k) => `*.${k}`),
  ...SECRET_KEYS.map((k) => `*.*.${k}`),
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
];

export interface LoggerOptions {
  service: string;
  level?: string;
  /** For tests: where lines go. */
  destination?: pino.DestinationStream;
}

/**
 * The active OpenTelemetry span's ids, for every line written while a request or a message is
 * handled: a log line points at its trace. Nothing when none is active (telemetry off: always).
 */
export function activeTraceIds(): { trace_id: string; span_id: string } | undefined {
  const span = trace.getSpanContext(context.active());
  return span && isSpanContextValid(span) ? { trace_id: span.traceId, span_id: span.spanId } : undefined;
}

/** The active span as a W3C traceparent (for what passes a trace on by hand), if one is active. */
export function activeTraceparent(): string | undefined {
  const span = trace.getSpanContext(context.active());
  return span && isSpanContextValid(span) ? `00-${span.traceId}-${span.spanId}-${(span.traceFlags & 1).toString(16).padStart(2, '0')}` : undefined;
}

const NO_IDS = {};

export function createLogger(opts: LoggerOptions): Logger {
  return pino(
    {
      level: opts.level ?? 'info',
      mixin: () => activeTraceIds() ?? NO_IDS,
      base: { service: opts.service },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    opts.destination,
  );
}
