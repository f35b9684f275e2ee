/**
 * Requests Node's HTTP parser refuses before express sees them (headers too large, bytes
 * HTTP does not allow, Content-Length with Transfer-Encoding, an unknown method, a request
 * too slow to arrive): Node's own answer is a bare status line, so they are answered here in
 * the error shape of the API, written to the socket, which is then closed.
 */
import { maxHeaderSize, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { AppError, httpStatusOf, newId, type ErrorCode } from '@mailroom/contracts';
import type { Logger } from '@mailroom/platform';
import { errorBody } from './errors';

/** How long a refused connection may stay open for the client to read the answer and close. */
const LINGER_MS = 2_000;

interface ParserError {
  code?: unknown;
  reason?: unknown;
}

/** The answer to one refusal of the parser, from its error code (llhttp's `HPE_*`, or Node's). */
export function refusalOf(err: ParserError): AppError {
  const code = typeof err.code === 'string' ? err.code : undefined;
  const reason = typeof err.reason === 'string' && err.reason ? ` (${err.reason})` : '';
  const refuse = (c: ErrorCode, message: string) => new AppError(c, message);
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return refuse('headers_too_large', `the request line and headers are larger than ${maxHeaderSize} bytes`);
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return refuse('payload_too_large', 'the chunk extensions of the request body are too large');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'HPE_HEADERS_TIMEOUT':
      return refuse('request_timeout', 'the request did not arrive in time');
    case 'HPE_INVALID_METHOD':
      return refuse('invalid_request', 'the request method is not an HTTP method');
    case 'HPE_INVALID_URL':
      return refuse('invalid_request', `the request target is not a valid URL; characters outside printable ASCII must be percent-encoded${reason}`);
    case 'HPE_INVALID_HEADER_TOKEN':
      return refuse('invalid_request', `a header name or value holds characters HTTP does not allow${reason}`);
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
    case 'HPE_INVALID_TRANSFER_ENCODING':
      return refuse('invalid_request', `the request body is framed ambiguously: send Content-Length or Transfer-Encoding: chunked, not both${reason}`);
    case 'HPE_INVALID_CONTENT_LENGTH':
      return refuse('invalid_request', `Content-Length is invalid${reason}`);
    default:
      return refuse('invalid_request', `the request is not valid HTTP/1.1${reason}`);
  }
}

/** The whole HTTP response for a refusal, with `Connection: close`. */
export function rawErrorResponse(err: AppError, requestId: string): string {
  const status = httpStatusOf(err.code);
  const body = JSON.stringify(errorBody(err, requestId));
  return [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Cache-Control: no-store',
    `X-Request-Id: ${requestId}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/**
 * Answers the parser's refusals on `server` in the error shape. A connection is answered
 * once; one whose response has begun (a later request on a kept-alive connection) is only
 * closed, since anything written would be read as part of that response.
 */
export function answerClientErrors(server: Server, log: Logger): void {
  // Exchanges not finished yet, per connection: with pipelining, several wait in turn.
  const open = new WeakMap<Duplex, Set<{ req: IncomingMessage; res: ServerResponse }>>();
  const answered = new WeakSet<Duplex>();
  server.on('request', (req, res) => {
    let exchanges = open.get(req.socket);
    if (!exchanges) open.set(req.socket, (exchanges = new Set()));
    const exchange = { req, res };
    exchanges.add(exchange);
    res.once('close', () => exchanges.delete(exchange));
  });
  server.on('clientError', (err: Error & ParserError, socket: Duplex) => {
    if (answered.has(socket)) return; // the parser reports again for each later chunk
    const pending = [...(open.get(socket) ?? [])].filter((x) => !x.res.writableFinished);
    // The refusal may only answer the request being read (its body is what the parser
    // refused), and only before its answer began: written otherwise, it would be read as
    // (part of) the answer to an earlier request still waiting for its own.
    const own = pending.length === 1 && !pending[0]!.req.complete && !pending[0]!.res.headersSent ? pending[0]!.res : undefined;
    if (err.code === 'ECONNRESET' || !socket.writable || (pending.length > 0 && !own)) {
      socket.destroy();
      return;
    }
    answered.add(socket);
    const refusal = refusalOf(err);
    // A request under way keeps the id its answer would have carried.
    const ownId = own?.getHeader('x-request-id');
    const requestId = typeof ownId === 'string' ? ownId : newId('request');
    log.debug({ request_id: requestId, code: err.code, status: refusal.status }, 'request refused by the HTTP parser');
    // The client reads the answer and closes; one that does not is cut off after a while.
    const linger = setTimeout(() => socket.destroy(), LINGER_MS);
    linger.unref();
    socket.once('close', () => clearTimeout(linger));
    socket.end(rawErrorResponse(refusal, requestId));
  });
}
