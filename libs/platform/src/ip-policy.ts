/**
 * Which IP addresses a webhook may reach. Everything that is not public unicast is refused:
 * loopback, private (RFC 1918), link-local, CGNAT (100.64/10), unique-local (fc00::/7),
 * unspecified, multicast, documentation and other reserved ranges, and IPv6 forms that
 * embed an IPv4 address (mapped ::ffff:0:0/96, NAT64 64:ff9b::/96, 6to4 2002::/16) are
 * judged by that IPv4 address. Operators may allow ranges (WEBHOOK_ALLOWED_CIDRS) for
 * development and tests. Pure functions: used by the API (literal addresses) and by the
 * HTTP client's connect-time DNS hook (webhooks, and auth's fetches of SSO identity providers). Addresses are read and ranges matched by ipaddr.js;
 * the list of refused ranges is ours (ipaddr's range() names are another list).
 */
import ipaddr from 'ipaddr.js';

type Addr = ipaddr.IPv4 | ipaddr.IPv6;

export interface Cidr {
  family: 4 | 6;
  /** The address and prefix length, as ipaddr's `match` takes them. */
  range: [Addr, number];
  bits: number;
  text: string;
}

/** Dotted decimal with four parts only (ipaddr also reads hex, octal and shorter forms). */
function parseV4(text: string): ipaddr.IPv4 | undefined {
  return ipaddr.IPv4.isValidFourPartDecimal(text) ? ipaddr.IPv4.parse(text) : undefined;
}

function parseV6(text: string): ipaddr.IPv6 | undefined {
  const bare = text.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const lastColon = bare.lastIndexOf(':');
  const tail = bare.slice(lastColon + 1);
  if (!tail.includes('.')) return ipaddr.IPv6.isValid(bare) ? ipaddr.IPv6.parse(bare) : undefined;
  // ipaddr reads a dotted IPv4 tail leniently (hex and octal parts; `::a.b.c.d` as IPv4-mapped,
  // which it is not): the tail must be four decimal parts, and fills the last two groups.
  const v4 = parseV4(tail);
  const head = `${bare.slice(0, lastColon + 1)}0:0`;
  if (!v4 || !ipaddr.IPv6.isValid(head)) return undefined;
  const groups = v4.toIPv4MappedAddress().parts;
  return new ipaddr.IPv6([...ipaddr.IPv6.parse(head).parts.slice(0, 6), groups[6]!, groups[7]!]);
}

export function parseIp(text: string): Addr | undefined {
  return parseV4(text) ?? parseV6(text);
}

export function parseCidr(text: string): Cidr | undefined {
  const [addr, bitsText, extra] = text.trim().split('/');
  if (extra !== undefined || !addr) return undefined;
  const ip = parseIp(addr);
  if (!ip) return undefined;
  const family = ip instanceof ipaddr.IPv4 ? 4 : 6;
  const max = family === 4 ? 32 : 128;
  const bits = bitsText === undefined ? max : /^\d{1,3}$/.test(bitsText) ? Number(bitsText) : NaN;
  if (!Number.isInteger(bits) || bits < 0 || bits > max) return undefined;
  return { family, range: [ip, bits], bits, text: `${addr}/${bits}` };
}

function inCidr(ip: Addr, cidr: Cidr): boolean {
  return ip.kind() === cidr.range[0].kind() && ip.match(cidr.range);
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
function embeddedV4(ip: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  if (inCidr(ip, MAPPED_V4) || inCidr(ip, NAT64)) return v4Of(ip.parts[6]!, ip.parts[7]!);
  if (inCidr(ip, SIX_TO_FOUR)) return v4Of(ip.parts[1]!, ip.parts[2]!);
  return undefined;
}

/** The IPv4 address two 16-bit groups hold. */
function v4Of(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

function isPublic(ip: Addr): boolean {
  if (ip instanceof ipaddr.IPv4) return !BLOCKED_V4.some((c) => inCidr(ip, c));
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
    if (ip instanceof ipaddr.IPv6) {
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
