/**
 * Which IP addresses a webhook may reach. Everything that is not public unicast is refused:
 * loopback, private (RFC 1918), link-local, CGNAT (100.64/10), unique-local (fc00::/7),
 * unspecified, multicast, documentation and other reserved ranges, and IPv6 forms that
 * embed an IPv4 address (mapped ::ffff:0:0/96, NAT64 64:ff9b::/96, 6to4 2002::/16) are
 * judged by that IPv4 address. Operators may allow ranges (WEBHOOK_ALLOWED_CIDRS) for
 * development and tests. Pure functions: used by the API (literal addresses) and by the
 * HTTP client's connect-time DNS hook.
 */
import { isIPv4, isIPv6 } from 'node:net';

interface V4 {
  family: 4;
  value: bigint;
}
interface V6 {
  family: 6;
  value: bigint;
}
type Addr = V4 | V6;

export interface Cidr {
  family: 4 | 6;
  base: bigint;
  bits: number;
  text: string;
}

function parseV4(text: string): bigint | undefined {
  if (!isIPv4(text)) return undefined;
  return text.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

function parseV6(text: string): bigint | undefined {
  const bare = text.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (!isIPv6(bare)) return undefined;
  let head = bare;
  let tailV4: bigint | undefined;
  const lastColon = bare.lastIndexOf(':');
  if (bare.slice(lastColon + 1).includes('.')) {
    tailV4 = parseV4(bare.slice(lastColon + 1));
    if (tailV4 === undefined) return undefined;
    head = `${bare.slice(0, lastColon + 1)}0:0`;
  }
  const [left, right] = head.includes('::') ? head.split('::') : [head, undefined];
  const l = left ? left.split(':') : [];
  const r = right === undefined ? [] : right ? right.split(':') : [];
  const missing = 8 - l.length - r.length;
  if (missing < 0 || (right === undefined && missing !== 0)) return undefined;
  const groups = [...l, ...Array<string>(right === undefined ? 0 : missing).fill('0'), ...r];
  let value = groups.reduce((acc, g) => (acc << 16n) | BigInt(Number.parseInt(g, 16)), 0n);
  if (tailV4 !== undefined) value = (value & ~0xffffffffn) | tailV4;
  return value;
}

export function parseIp(text: string): Addr | undefined {
  const v4 = parseV4(text);
  if (v4 !== undefined) return { family: 4, value: v4 };
  const v6 = parseV6(text);
  if (v6 !== undefined) return { family: 6, value: v6 };
  return undefined;
}

export function parseCidr(text: string): Cidr | undefined {
  const [addr, bitsText, extra] = text.trim().split('/');
  if (extra !== undefined || !addr) return undefined;
  const ip = parseIp(addr);
  if (!ip) return undefined;
  const max = ip.family === 4 ? 32 : 128;
  const bits = bitsText === undefined ? max : /^\d{1,3}$/.test(bitsText) ? Number(bitsText) : NaN;
  if (!Number.isInteger(bits) || bits < 0 || bits > max) return undefined;
  const mask = maskOf(ip.family, bits);
  return { family: ip.family, base: ip.value & mask, bits, text: `${addr}/${bits}` };
}

function maskOf(family: 4 | 6, bits: number): bigint {
  const width = family === 4 ? 32n : 128n;
  const all = (1n << width) - 1n;
  return bits === 0 ? 0n : (all << (width - BigInt(bits))) & all;
}

function inCidr(ip: Addr, cidr: Cidr): boolean {
  return ip.family === cidr.family && (ip.value & maskOf(cidr.family, cidr.bits)) === cidr.base;
}

function cidrs(list: string[]): Cidr[] {
  return list.map((c) => {
    const parsed = parseCidr(c);
    if (!parsed) throw new Error(`bad built-in range ${c}`);
    return parsed;
  });
}

/** IPv4 ranges that are not publicly routable unicast (IANA special-purpose registry). */
const BLOCKED_V4 = cidrs([
  '0.0.0.0/8', // "this network", unspecified
  '10.0.0.0/8', // private
  '100.64.0.0/10', // CGNAT (shared address space)
  '127.0.0.0/8', // loopback
  '169.254.0.0/16', // link-local (cloud metadata lives here)
  '172.16.0.0/12', // private
  '192.0.0.0/24', // IETF protocol assignments
  '192.0.2.0/24', // documentation
  '192.88.99.0/24', // 6to4 relay anycast (deprecated)
  '192.168.0.0/16', // private
  '198.18.0.0/15', // benchmarking
  '198.51.100.0/24', // documentation
  '203.0.113.0/24', // documentation
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, and 255.255.255.255 broadcast
]);

/** IPv6: only global unicast (2000::/3) is reachable, minus these. */
const GLOBAL_V6 = cidrs(['2000::/3'])[0]!;
const BLOCKED_V6 = cidrs([
  '2001::/23', // IETF protocol assignments (Teredo, benchmarking, ORCHID, ...)
  '2001:db8::/32', // documentation
  '3fff::/20', // documentation
]);
const MAPPED_V4 = cidrs(['::ffff:0:0/96'])[0]!; // IPv4-mapped
const NAT64 = cidrs(['64:ff9b::/96'])[0]!; // well-known NAT64 prefix
const SIX_TO_FOUR = cidrs(['2002::/16'])[0]!; // 6to4: the IPv4 address is in bits 16..47

export type BlockReason = 'invalid' | 'not_public';

/** The IPv4 address an IPv6 address stands for, if it embeds one. */
function embeddedV4(ip: V6): V4 | undefined {
  if (inCidr(ip, MAPPED_V4) || inCidr(ip, NAT64)) return { family: 4, value: ip.value & 0xffffffffn };
  if (inCidr(ip, SIX_TO_FOUR)) return { family: 4, value: (ip.value >> 80n) & 0xffffffffn };
  return undefined;
}

function isPublic(ip: Addr): boolean {
  if (ip.family === 4) return !BLOCKED_V4.some((c) => inCidr(ip, c));
  const v4 = embeddedV4(ip);
  if (v4) return isPublic(v4);
  return inCidr(ip, GLOBAL_V6) && !BLOCKED_V6.some((c) => inCidr(ip, c));
}

export class IpPolicy {
  readonly allowed: Cidr[];

  /** `allowedCidrs`: ranges reachable although not public (development and tests only). */
  constructor(allowedCidrs: string[] = []) {
    this.allowed = allowedCidrs.map((text) => {
      const c = parseCidr(text);
      if (!c) throw new Error(`not a CIDR range: ${text}`);
      return c;
    });
  }

  /** Whether a connection to `address` (an IP literal) may be made; anything unparseable is refused. */
  permits(address: string): boolean {
    const ip = parseIp(address);
    if (!ip) return false;
    if (isPublic(ip)) return true;
    const candidates: Addr[] = [ip];
    if (ip.family === 6) {
      const v4 = embeddedV4(ip);
      if (v4) candidates.push(v4);
    }
    return candidates.some((a) => this.allowed.some((c) => inCidr(a, c)));
  }
}

/** The IP literal a URL hostname is, or undefined for a name (`[::1]` -> `::1`). */
export function ipLiteralOf(hostname: string): string | undefined {
  const bare = hostname.replace(/^\[|\]$/g, '');
  return parseIp(bare) ? bare : undefined;
}
