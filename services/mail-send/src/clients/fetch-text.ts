/** Plain HTTPS GETs for the domain's FetchText port (SNS certificates, subscription confirmations). */
import type { FetchText } from '../domain/ports';

/** GET with a timeout and a size bound, no redirects; anything but 200 is an error. */
export const fetchText: FetchText = async (url, maxBytes) => {
  const res = await fetch(url, { redirect: 'error', signal: AbortSignal.timeout(5_000) });
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}`);
  const length = Number(res.headers.get('content-length') ?? 0);
  if (length > maxBytes) throw new Error(`GET ${url}: ${length} bytes, more than ${maxBytes}`);
  const body = Buffer.from(await res.arrayBuffer());
  if (body.length > maxBytes) throw new Error(`GET ${url}: more than ${maxBytes} bytes`);
  return body.toString('utf8');
};
