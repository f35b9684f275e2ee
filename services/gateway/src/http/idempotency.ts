/**
 * Idempotency-Key for writes that create or send. Records live in a JetStream key-value
 * bucket for 24 hours (the gateway owns no tables): the first request with a key claims
 * it, its answer is stored, and a repeat with the same key and body gets that answer
 * back (with `Idempotent-Replayed: true`). Same key, other body: 409. A claim whose
 * request is still running: 409, retry shortly. A claim left by a crashed gateway is
 * taken over after a minute. Answers of 5xx are not stored, so a retry can succeed.
 * Stored answers are sealed (SECRETS_ENCRYPTION_KEY, bound to their record): some carry a
 * secret shown once (an API key, a webhook endpoint's secret), which must not sit in the
 * bucket in plain text.
 */
import { Kvm, type KV } from '@nats-io/kv';
import { AppError, KV_BUCKETS } from '@mailroom/contracts';
import { z } from 'zod';
import type { Bus } from '@mailroom/messaging';
import { sha256, type SecretBox } from '@mailroom/platform';

const ABANDONED_AFTER_MS = 60_000;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

const record_ = z.discriminatedUnion('state', [
  z.object({ state: z.literal('pending'), fingerprint: z.string(), started_at: z.number() }),
  /** `sealed`: the answer's JSON, sealed, base64 (absent: no body). `body`: the answer in clear, as kept before answers were sealed (24 h at most). */
  z.object({ state: z.literal('done'), fingerprint: z.string(), status: z.number().int(), sealed: z.string().optional(), body: z.unknown().optional() }),
]);
type Record_ = z.infer<typeof record_>;

export type Claim =
  /** `key`: hex SHA-256 of the caller and the key, passed to the service (Mr-Request-Key) so a retry after a 5xx, which is not kept, is not made twice. */
  | { kind: 'new'; key: string; commit(status: number, body: unknown): Promise<void>; release(): Promise<void> }
  | { kind: 'replay'; status: number; body: unknown };

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class IdempotencyStore {
  private constructor(
    private readonly kv: KV,
    private readonly box: SecretBox,
  ) {}

  static async open(bus: Bus, box: SecretBox): Promise<IdempotencyStore> {
    // The migrate step made the bucket (its settings are in the catalog).
    const kv = await new Kvm(bus.js).open(bus.ns.stream(KV_BUCKETS.idempotency.name));
    return new IdempotencyStore(kv, box);
  }

  static validateKey(key: string): void {
    if (!KEY_PATTERN.test(key)) {
      throw new AppError('invalid_request', 'Idempotency-Key must be 1 to 255 printable ASCII characters');
    }
  }

  /** `scope` = who asks (a principal); `fingerprint` = what is asked (method, path, body). */
  async claim(scope: string, key: string, fingerprint: string, now = Date.now()): Promise<Claim> {
    const id = sha256(`${scope}\n${key}`).toString('hex');
    const fp = sha256(fingerprint).toString('hex');
    for (let attempt = 0; attempt < 3; attempt++) {
      const pending: Record_ = { state: 'pending', fingerprint: fp, started_at: now };
      try {
        await this.kv.create(id, encoder.encode(JSON.stringify(pending)));
        return this.newClaim(id, fp);
      } catch {
        // Exists (or a race): read what is there.
      }
      const entry = await this.kv.get(id);
      if (!entry || entry.operation !== 'PUT') continue;
      const record = record_.parse(JSON.parse(decoder.decode(entry.value)));
      if (record.fingerprint !== fp) {
        throw new AppError('idempotency_conflict', 'this Idempotency-Key was used with a different request; use a new key');
      }
      if (record.state === 'done') {
        const body: unknown = record.sealed === undefined ? record.body : JSON.parse(this.box.open(Buffer.from(record.sealed, 'base64'), id).toString('utf8'));
        return { kind: 'replay', status: record.status, body };
      }
      if (now - record.started_at < ABANDONED_AFTER_MS) {
        throw new AppError('idempotency_in_progress', 'a request with this Idempotency-Key is still being processed; retry shortly');
      }
      try {
        await this.kv.update(id, encoder.encode(JSON.stringify(pending)), entry.revision);
        return this.newClaim(id, fp);
      } catch {
        // Someone else took it over; look again.
      }
    }
    throw new AppError('idempotency_in_progress', 'a request with this Idempotency-Key is still being processed; retry shortly');
  }

  private newClaim(id: string, fp: string): Claim {
    return {
      kind: 'new',
      key: id,
      commit: async (status, body) => {
        const done: Record_ = { state: 'done', fingerprint: fp, status, ...(body === undefined ? {} : { sealed: this.box.seal(JSON.stringify(body), id).toString('base64') }) };
        await this.kv.put(id, encoder.encode(JSON.stringify(done)));
      },
      release: async () => {
        await this.kv.delete(id);
      },
    };
  }
}
