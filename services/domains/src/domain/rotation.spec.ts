/** DKIM key rotation's rules: the records listed, the lookups made, what a check means for a pending rotation, and its schedule. */
import { checkRecords } from './dns-check';
import { keysOf, nextSelectorOf, rotationOutcome } from './domains';
import type { DnsAnswer, DnsLookup } from './ports';
import { recordsOf, type Checks, type RecordCheck, type RecordSettings } from './records';
import { rotationRecheckMs, type Schedule } from './verification';

const s: RecordSettings = { mxHost: 'mx.mailroom.test', spfInclude: 'spf.mailroom.test', dmarcRua: null, bounceTarget: 'bounces.mailroom.test' };
const schedule: Schedule = { backoffBaseMs: 60_000, backoffMaxMs: 6 * 3_600_000, recheckMs: 6 * 3_600_000 };
const at = '2026-11-30T10:00:00.000Z';
const ok: RecordCheck = { status: 'verified', reason: null, found: [], checked_at: at };
const missing: RecordCheck = { status: 'failed', reason: 'missing', found: [], checked_at: at };
const base = { name: 'example.com', dkim_selector: 'mrcurrent1', dkim_public_key: 'OLDKEY' };
const rotating = { ...base, dkim_next_selector: 'mrnext0001', dkim_next_public_key: 'NEWKEY', dkim_next_private_key_sealed: Buffer.from('sealed-new') };
const idle = { ...base, dkim_next_selector: null, dkim_next_public_key: null, dkim_next_private_key_sealed: null };

describe('a pending rotation in the records', () => {
  it('lists the new key as dkim_next, beside the current one, pending and not required', () => {
    const records = recordsOf(keysOf(rotating), s, {});
    expect(records.map((r) => [r.kind, r.name, r.value, r.required, r.status])).toEqual([
      ['mx', 'example.com', 'mx.mailroom.test', false, 'pending'],
      ['spf', 'example.com', 'v=spf1 include:spf.mailroom.test ~all', true, 'pending'],
      ['dkim', 'mrcurrent1._domainkey.example.com', 'v=DKIM1; k=rsa; p=OLDKEY', true, 'pending'],
      ['dmarc', '_dmarc.example.com', 'v=DMARC1; p=none', false, 'pending'],
      ['bounce', 'bounces.example.com', 'bounces.mailroom.test', false, 'pending'],
      ['dkim_next', 'mrnext0001._domainkey.example.com', 'v=DKIM1; k=rsa; p=NEWKEY', false, 'pending'],
    ]);
    expect(recordsOf(keysOf(idle), s, {}).map((r) => r.kind)).not.toContain('dkim_next');
  });

  it('makes a selector of the same shape, never the current one', () => {
    for (let i = 0; i < 50; i++) expect(nextSelectorOf('mrcurrent1')).toMatch(/^mr[0-9a-z]{8}$/);
  });

  it('is looked up with the others, and only while pending', async () => {
    const asked: string[] = [];
    const txt: Record<string, string[]> = { 'mrcurrent1._domainkey.example.com': ['v=DKIM1; k=rsa; p=OLDKEY'], 'mrnext0001._domainkey.example.com': ['v=DKIM1; k=rsa; p=NEWKEY'] };
    const dns: DnsLookup = {
      txt: async (name): Promise<DnsAnswer<string>> => (asked.push(name), txt[name] ? { kind: 'found', values: txt[name] } : { kind: 'none' }),
      mx: async () => ({ kind: 'none' }),
      cname: async () => ({ kind: 'none' }),
    };
    const checks = await checkRecords(dns, keysOf(rotating), s, new Date(at));
    expect([checks.dkim?.status, checks.dkim_next?.status]).toEqual(['verified', 'verified']);
    expect(asked).toContain('mrnext0001._domainkey.example.com');
    asked.length = 0;
    expect((await checkRecords(dns, keysOf(idle), s, new Date(at))).dkim_next).toBeUndefined();
    expect(asked).not.toContain('mrnext0001._domainkey.example.com');
  });
});

describe('what a check means for a rotation', () => {
  const found = (next?: RecordCheck): Checks => ({ spf: ok, dkim: ok, dmarc: missing, mx: missing, bounce: ok, ...(next ? { dkim_next: next } : {}) });

  it('makes the new key the current one once its record verifies: its check becomes the DKIM check', () => {
    const { checks, promoted } = rotationOutcome(rotating, found(ok), 'NEWKEY');
    expect(promoted).toEqual({
      dkim_selector: 'mrnext0001',
      dkim_public_key: 'NEWKEY',
      dkim_private_key_sealed: Buffer.from('sealed-new'),
      dkim_next_selector: null,
      dkim_next_public_key: null,
      dkim_next_private_key_sealed: null,
      dkim_next_created_at: null,
    });
    expect(checks.dkim).toBe(ok);
    expect(checks.dkim_next).toBeUndefined();
  });

  it('keeps the old key signing while the new record is missing, with its check kept for the records', () => {
    const { checks, promoted } = rotationOutcome(rotating, found(missing), 'NEWKEY');
    expect(promoted).toBeUndefined();
    expect(checks.dkim_next).toBe(missing);
  });

  it('ignores a result for another key, or from a check that began before the rotation, and drops one when no rotation is pending', () => {
    expect(rotationOutcome(rotating, found(ok), 'OTHERKEY')).toEqual({ checks: found() });
    expect(rotationOutcome(rotating, found(), null)).toEqual({ checks: found() });
    expect(rotationOutcome(idle, found(ok), 'NEWKEY')).toEqual({ checks: found() });
  });

  it('looks for the new record often at first, then less, within the backoff bounds', () => {
    const rotatedAt = new Date(at);
    const after = (ms: number) => rotationRecheckMs(rotatedAt, new Date(rotatedAt.getTime() + ms), schedule);
    expect(after(0)).toBe(60_000);
    expect(after(10 * 60_000)).toBe(5 * 60_000);
    expect(after(4 * 3_600_000)).toBe(2 * 3_600_000);
    expect(after(7 * 86_400_000)).toBe(6 * 3_600_000);
  });
});
