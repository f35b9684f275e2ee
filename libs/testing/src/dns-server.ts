/**
 * An authoritative DNS server on loopback for tests, so that code under test goes through the
 * real resolver (node:dns, c-ares) instead of a stub. Owns the zone record shapes, how a query
 * is answered from them (NXDOMAIN, NODATA, CNAME chains, TXT chunking, truncation with the
 * TCP retry it triggers) and the faults a test can put on a name (SERVFAIL, a slow answer).
 */
import dgram from 'node:dgram';
import net from 'node:net';
import {
  AUTHORITATIVE_ANSWER,
  RECURSION_DESIRED,
  TRUNCATED_RESPONSE,
  decode,
  encode,
  type Answer,
  type DecodedPacket,
  type Packet,
  type Question,
  type SoaData,
} from 'dns-packet';

type RecordBase = {
  /** Owner name, case-insensitive, with or without the trailing dot. */
  name: string;
  /** Seconds; 0 by default so that a resolver never caches an answer that set() or add() changes. */
  ttl?: number;
};

export type DnsRecord = RecordBase &
  (
    | { type: 'A' | 'AAAA'; address: string }
    | { type: 'CNAME' | 'PTR' | 'NS'; target: string }
    | { type: 'MX'; preference: number; exchange: string }
    /** Each string becomes one or more <character-string>s: longer ones are split every 255 bytes. */
    | { type: 'TXT'; text: string | Buffer | Array<string | Buffer> }
    | { type: 'SOA'; soa: SoaData }
  );

export type DnsRecordType = DnsRecord['type'];

/** A record the domains API tells a customer to publish (type, name, value, MX priority), as this server serves it. */
export function publishedRecord(r: { type: 'MX' | 'TXT' | 'CNAME'; name: string; value: string; priority: number | null }, value = r.value): DnsRecord {
  if (r.type === 'MX') return { type: 'MX', name: r.name, preference: r.priority ?? 10, exchange: value };
  if (r.type === 'CNAME') return { type: 'CNAME', name: r.name, target: value };
  return { type: 'TXT', name: r.name, text: value };
}

export interface DnsFault {
  name: string;
  /** The question types it applies to; all of them when left out. */
  types?: DnsRecordType[];
  /** Answer SERVFAIL instead of the zone's answer. */
  servfail?: boolean;
  /** Answer this late; longer than the client's timeout, it is a timeout. */
  delayMs?: number;
}

export interface DnsServerOptions {
  faults?: DnsFault[];
  /** UDP and TCP port; a free one when left out (tests). */
  port?: number;
}

export interface DnsServer {
  host: '127.0.0.1';
  port: number;
  /** For Resolver#setServers and DNS_SERVERS. */
  servers: string;
  /** Replaces the whole zone. */
  set(records: DnsRecord[]): void;
  add(record: DnsRecord): void;
  close(): Promise<void>;
}

const HOST = '127.0.0.1';
const MAX_CHARACTER_STRING = 255;
/** RFC 1035 4.2.1: the UDP limit of a client that did not announce a larger one with EDNS. */
const CLASSIC_UDP_LIMIT = 512;
const MAX_CNAME_CHAIN = 8;
const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3 } as const;
const SERVED_TYPES: ReadonlySet<string> = new Set<DnsRecordType>(['A', 'AAAA', 'CNAME', 'PTR', 'NS', 'MX', 'TXT', 'SOA']);

function normalizeName(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}

function isServedType(type: string): type is DnsRecordType {
  return SERVED_TYPES.has(type);
}

/** dns-packet writes a string's length into one byte without a check, so longer ones are cut here. */
function characterStrings(text: string | Buffer | Array<string | Buffer>): Buffer[] {
  const chunks: Buffer[] = [];
  for (const item of Array.isArray(text) ? text : [text]) {
    const bytes = typeof item === 'string' ? Buffer.from(item, 'utf8') : item;
    if (bytes.length === 0) chunks.push(bytes);
    for (let at = 0; at < bytes.length; at += MAX_CHARACTER_STRING) {
      chunks.push(bytes.subarray(at, at + MAX_CHARACTER_STRING));
    }
  }
  return chunks;
}

function toAnswer(record: DnsRecord, ownerName: string): Answer {
  const base = { name: ownerName, ttl: record.ttl ?? 0, class: 'IN' as const };
  switch (record.type) {
    case 'A':
    case 'AAAA':
      return { ...base, type: record.type, data: record.address };
    case 'CNAME':
    case 'PTR':
    case 'NS':
      return { ...base, type: record.type, data: record.target };
    case 'MX':
      return { ...base, type: 'MX', data: { preference: record.preference, exchange: record.exchange } };
    case 'TXT':
      return { ...base, type: 'TXT', data: characterStrings(record.text) };
    case 'SOA':
      return { ...base, type: 'SOA', data: record.soa };
  }
}

class Zone {
  private readonly byName = new Map<string, DnsRecord[]>();

  constructor(records: DnsRecord[]) {
    for (const record of records) this.add(record);
  }

  add(record: DnsRecord): void {
    const name = normalizeName(record.name);
    this.byName.set(name, [...(this.byName.get(name) ?? []), record]);
  }

  /** RFC 1034 4.3.2 for a server that is authoritative for every name: follows the CNAMEs it holds. */
  answer(question: Question): { rcode: number; answers: Answer[] } {
    const answers: Answer[] = [];
    const visited = new Set<string>();
    let ownerName = question.name;
    while (answers.length <= MAX_CNAME_CHAIN) {
      const name = normalizeName(ownerName);
      const records = this.byName.get(name);
      if (!records) return { rcode: RCODE.NXDOMAIN, answers };
      const matching = records.filter((r) => r.type === question.type);
      if (matching.length > 0) return { rcode: RCODE.NOERROR, answers: [...answers, ...matching.map((r) => toAnswer(r, ownerName))] };
      const alias = records.find((r): r is Extract<DnsRecord, { target: string }> => r.type === 'CNAME');
      if (!alias || visited.has(name)) break;
      visited.add(name);
      answers.push(toAnswer(alias, ownerName));
      ownerName = alias.target;
    }
    return { rcode: RCODE.NOERROR, answers };
  }
}

function findFault(faults: DnsFault[], question: Question): DnsFault | undefined {
  const name = normalizeName(question.name);
  return faults.find(
    (f) => normalizeName(f.name) === name && (!f.types || (isServedType(question.type) && f.types.includes(question.type))),
  );
}

/** The largest UDP answer the client accepts: its EDNS payload size, or the classic 512 bytes. */
function udpLimit(query: DecodedPacket): number {
  const opt = query.additionals?.find((a) => a.type === 'OPT');
  return opt && opt.type === 'OPT' ? Math.max(opt.udpPayloadSize, CLASSIC_UDP_LIMIT) : CLASSIC_UDP_LIMIT;
}

export async function startDnsServer(zone: DnsRecord[], opts: DnsServerOptions = {}): Promise<DnsServer> {
  let records = new Zone(zone);
  const faults = opts.faults ?? [];
  const pendingReplies = new Set<NodeJS.Timeout>();
  const tcpSockets = new Set<net.Socket>();

  function respond(query: DecodedPacket, fault: DnsFault | undefined): Packet {
    // RFC 1035 4.1.1: RD is copied from the query into the response.
    const header = { type: 'response' as const, id: query.id ?? 0, flags: AUTHORITATIVE_ANSWER | (query.flag_rd ? RECURSION_DESIRED : 0) };
    const question = query.questions?.length === 1 ? query.questions[0] : undefined;
    if (!question) return { ...header, flags: header.flags | RCODE.FORMERR, questions: query.questions ?? [] };
    if (fault?.servfail) return { ...header, flags: header.flags | RCODE.SERVFAIL, questions: [question] };
    const { rcode, answers } = records.answer(question);
    return { ...header, flags: header.flags | rcode, questions: [question], answers };
  }

  /** Sends the answer, after the fault's delay if there is one; close() drops the ones still waiting. */
  function reply(query: DecodedPacket, send: (response: Packet) => void): void {
    const question = query.questions?.[0];
    const fault = question && findFault(faults, question);
    if (!fault?.delayMs) return send(respond(query, fault));
    const timer = setTimeout(() => {
      pendingReplies.delete(timer);
      send(respond(query, fault));
    }, fault.delayMs);
    pendingReplies.add(timer);
  }

  /** A malformed packet is dropped: a test server answers what a resolver sends, nothing else. */
  function decodeQuery(bytes: Buffer): DecodedPacket | undefined {
    try {
      const packet = decode(bytes);
      return packet.type === 'query' ? packet : undefined;
    } catch {
      return undefined;
    }
  }

  function handleUdp(socket: dgram.Socket, bytes: Buffer, peer: dgram.RemoteInfo): void {
    const query = decodeQuery(bytes);
    if (!query) return;
    reply(query, (response) => {
      let out = encode(response);
      // Too big for UDP: TC and no records, and the client asks again over TCP.
      if (out.length > udpLimit(query)) out = encode({ ...response, flags: (response.flags ?? 0) | TRUNCATED_RESPONSE, answers: [] });
      socket.send(out, peer.port, peer.address);
    });
  }

  function handleTcp(socket: net.Socket): void {
    tcpSockets.add(socket);
    socket.on('close', () => tcpSockets.delete(socket));
    socket.on('error', () => socket.destroy());
    // RFC 1035 4.2.2: each message is preceded by its length in two bytes.
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        const length = buffered.readUInt16BE(0);
        const query = decodeQuery(buffered.subarray(2, 2 + length));
        buffered = buffered.subarray(2 + length);
        if (!query) return socket.destroy();
        reply(query, (response) => {
          const out = encode(response);
          const prefix = Buffer.alloc(2);
          prefix.writeUInt16BE(out.length);
          if (!socket.destroyed) socket.write(Buffer.concat([prefix, out]));
        });
      }
    });
  }

  const tcp = net.createServer(handleTcp);
  const { udp, port } = await listenOnOnePort(tcp, () => {
    const socket = dgram.createSocket('udp4');
    socket.on('message', (bytes, peer) => handleUdp(socket, bytes, peer));
    return socket;
  }, opts.port);
  return {
    host: HOST,
    port,
    servers: `${HOST}:${port}`,
    set(next) {
      records = new Zone(next);
    },
    add(record) {
      records.add(record);
    },
    async close() {
      for (const timer of pendingReplies) clearTimeout(timer);
      pendingReplies.clear();
      for (const socket of tcpSockets) socket.destroy();
      await Promise.all([
        new Promise<void>((resolve) => udp.close(() => resolve())),
        new Promise<void>((resolve) => tcp.close(() => resolve())),
      ]);
    },
  };
}

/**
 * Binds UDP to an ephemeral port (or the one wanted), then TCP to the same number. Another
 * process can hold that TCP port already, so a few ephemeral ports are tried.
 */
async function listenOnOnePort(tcp: net.Server, createUdp: () => dgram.Socket, wanted = 0): Promise<{ udp: dgram.Socket; port: number }> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 5; attempt++) {
    const udp = createUdp();
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(wanted, HOST, () => {
        udp.off('error', reject);
        resolve();
      });
    });
    const port = udp.address().port;
    try {
      await new Promise<void>((resolve, reject) => {
        tcp.once('error', reject);
        tcp.listen(port, HOST, () => {
          tcp.off('error', reject);
          resolve();
        });
      });
      return { udp, port };
    } catch (err) {
      lastError = err;
      await new Promise<void>((resolve) => udp.close(() => resolve()));
    }
  }
  throw new Error(`no port free for both UDP and TCP on ${HOST}: ${String(lastError)}`);
}
