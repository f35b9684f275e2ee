/**
 * Seals of the messages stored on the bus (events, facts, work items). A subject has one
 * publisher (contracts BUS_ACCESS); it and the subject's readers hold the subject's key, and
 * a reader takes a message only under a valid HMAC of its subject and body. NATS permissions
 * already keep other identities from publishing there, but not from having the server do it:
 * a JetStream consumer delivers to whatever subject its configuration names, unchecked
 * (nats-server 2.9), so a service allowed to create a consumer on a stream whose bytes it
 * can write could have them stored as `mail.inbound`. Without the key, they are refused.
 */
import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { BUS_ACCESS, CONSUMERS, PUBLISHED_SUBJECTS, STREAMS, consumerFilter, type BusIdentity, type StreamName } from '@mailroom/contracts';

export interface StoredSeal {
  /** The header value for `data` published on `subject` (un-prefixed; `wire`: as published); undefined without its key. */
  seal(subject: string, wire: string, data: Uint8Array): string | undefined;
  /** Whether `header` seals `data` on `subject`, under its key. Never throws. */
  check(subject: string, wire: string, data: Uint8Array, header: string | undefined): boolean;
}

/** The key of one stored subject, derived from the bus master key (kept with the operator's keys). */
export function subjectKey(busMaster: Buffer, subject: string): Buffer {
  return createHmac('sha256', busMaster).update(`mailroom stored seal key v1\n${subject}`).digest();
}

function matches(pattern: string, subject: string): boolean {
  return pattern.endsWith('.>') ? subject.startsWith(pattern.slice(0, -1)) : pattern === subject;
}

function subjectsOf(stream: StreamName): string[] {
  return PUBLISHED_SUBJECTS.filter((s) => STREAMS[stream].subjects.some((p) => matches(p, s)));
}

/**
 * The stored subjects an identity publishes or reads: the keys it holds. A filtered consumer
 * reads one subject of its stream, and gets that key alone: the more identities hold a key,
 * the more could forge what the others read.
 */
export function sealedSubjectsOf(identity: BusIdentity): string[] {
  const access = BUS_ACCESS[identity];
  const consumed = access.consumes.flatMap((c) => {
    const filter = consumerFilter(c);
    return filter ? PUBLISHED_SUBJECTS.filter((s) => matches(filter, s)) : subjectsOf(CONSUMERS[c].stream);
  });
  return [...new Set([...access.publishes, ...consumed, ...access.follows.flatMap(subjectsOf)])];
}

const HEADER = /^[A-Za-z0-9_-]{43}$/;

export function storedSeal(keys: Map<string, Buffer>): StoredSeal {
  const objects = new Map<string, KeyObject>([...keys].map(([subject, key]) => [subject, createSecretKey(key)]));
  const mac = (key: KeyObject, wire: string, data: Uint8Array) => createHmac('sha256', key).update(`mailroom stored seal v1\n${wire}\n`).update(data).digest();
  return {
    seal(subject, wire, data) {
      const key = objects.get(subject);
      return key ? mac(key, wire, data).toString('base64url') : undefined;
    },
    check(subject, wire, data, header) {
      const key = objects.get(subject);
      if (!key || !header || !HEADER.test(header)) return false;
      return timingSafeEqual(mac(key, wire, data), Buffer.from(header, 'base64url'));
    },
  };
}
