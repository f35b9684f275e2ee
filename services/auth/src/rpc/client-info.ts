/**
 * The end client of a call as the gateway reported it (CallContext.client), read like any
 * input at a boundary: an address that is not an IP address is dropped (behind a trusted
 * proxy it is taken from X-Forwarded-For, which a client can write), and an IPv4 address
 * mapped into IPv6 (a dual-stack listener's ::ffff:192.0.2.1) is written as IPv4.
 */
import { isIP, isIPv4 } from 'node:net';
import type { CallContext } from '@mailroom/messaging';
import type { ClientInfo } from '../domain/ports';

const MAPPED_V4 = '::ffff:';

export function clientInfo(client: CallContext['client']): ClientInfo {
  const raw = client?.ip;
  const mapped = raw?.toLowerCase().startsWith(MAPPED_V4) ? raw.slice(MAPPED_V4.length) : undefined;
  const ip = mapped !== undefined && isIPv4(mapped) ? mapped : raw && isIP(raw) ? raw : undefined;
  return { ip, userAgent: client?.userAgent };
}
