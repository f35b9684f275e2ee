/**
 * The rules a receiver URL must follow when it is registered: https in production (http
 * too in development and test), no credentials in it, and no literal address that is not
 * public unless an operator allowed its range. Host names are checked again at connect
 * time, on every new connection, by the HTTP client (a name can resolve anywhere).
 */
import { AppError, WEBHOOK_URL_MAX_LENGTH } from '@mailroom/contracts';
import { ipLiteralOf, type IpPolicy } from './ip-policy';

export interface UrlPolicyOptions {
  /** Plain http is accepted outside production. */
  allowHttp: boolean;
  ips: IpPolicy;
}

function invalid(message: string): AppError {
  return new AppError('invalid_request', `url ${message}`, { details: [{ path: 'url', message }] });
}

/** The URL as it will be stored and called (normalised by the WHATWG parser, fragment dropped). */
export function checkReceiverUrl(raw: string, opts: UrlPolicyOptions): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('must be an absolute URL such as https://example.com/webhooks');
  }
  if (url.protocol !== 'https:' && !(opts.allowHttp && url.protocol === 'http:')) {
    throw invalid(opts.allowHttp ? 'must use https or http' : 'must use https');
  }
  if (url.username || url.password) throw invalid('must not contain credentials; authenticate deliveries by their signature');
  if (!url.hostname) throw invalid('must name a host');
  if (url.port === '0') throw invalid('must not use port 0');
  const literal = ipLiteralOf(url.hostname);
  if (literal !== undefined && !opts.ips.permits(literal)) {
    throw invalid('must not point to a private, loopback, link-local or otherwise non-public address');
  }
  url.hash = '';
  const normalised = url.toString();
  // Measured as stored: percent-encoding can make a URL that was short enough several times longer.
  if (normalised.length > WEBHOOK_URL_MAX_LENGTH) throw invalid(`must be at most ${WEBHOOK_URL_MAX_LENGTH} characters once encoded (it is ${normalised.length})`);
  return normalised;
}
