import { createHash } from 'node:crypto';
import { AppError } from '@mailroom/contracts';
import { ManualClock } from '@mailroom/platform';
import type { UploadRepository, UploadRow } from '../repo/upload.repository';
import { sha256Hex, Uploads } from './uploads';

const A = { org_id: 'org_01kaaaaaaaaaaaaaaaaaaaaaaa', env_id: 'env_01kaaaaaaaaaaaaaaaaaaaaaaa' };
const B = { org_id: 'org_01kbbbbbbbbbbbbbbbbbbbbbbb', env_id: 'env_01kbbbbbbbbbbbbbbbbbbbbbbb' };

/** A repository over a list, filtering on tenant as the real one's query does. */
function memoryRepo(): UploadRepository & { rows: UploadRow[] } {
  const rows: UploadRow[] = [];
  return {
    rows,
    insert: async (row: UploadRow) => (rows.some((r) => r.id === row.id) ? false : (rows.push(row), true)),
    find: async (t: { org_id: string; env_id: string }, ids: string[]) => rows.filter((r) => r.org_id === t.org_id && r.env_id === t.env_id && ids.includes(r.id)),
    deleteExpired: async (before: Date) => rows.splice(0, rows.length, ...rows.filter((r) => r.expires_at >= before)).length,
  } as unknown as UploadRepository & { rows: UploadRow[] };
}

const bytes = Buffer.from('hello');
const digest = `SHA-256=${createHash('sha256').update(bytes).digest('base64url')}`;

function setUp(objects: Record<string, { size: number; digest: string }>) {
  const clock = new ManualClock(new Date('2026-12-10T09:00:00.000Z'));
  const repo = memoryRepo();
  const uploads = new Uploads(repo, { info: async (o) => objects[o] ?? null }, clock, 1000);
  return { clock, repo, uploads };
}

const code = (p: Promise<unknown>) => p.then(() => 'ok', (e: unknown) => (e instanceof AppError ? `${e.status} ${e.code}` : String(e)));

describe('uploads', () => {
  it('records size and SHA-256 as the store says, expiring in 24 hours', async () => {
    const { uploads } = setUp({ att_1: { size: 5, digest } });
    expect(await uploads.register(A, { object: 'att_1', filename: 'a.txt', content_type: 'text/plain' })).toEqual({
      attachment_id: 'att_1',
      filename: 'a.txt',
      content_type: 'text/plain',
      size: 5,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      expires_at: '2026-12-11T09:00:00.000Z',
    });
  });

  it('refuses an object that is not stored, one over the limit, and one recorded twice', async () => {
    const { uploads } = setUp({ att_1: { size: 5, digest }, att_big: { size: 1001, digest } });
    expect(await code(uploads.register(A, { object: 'att_none', filename: 'a', content_type: 'text/plain' }))).toBe('400 invalid_request');
    expect(await code(uploads.register(A, { object: 'att_big', filename: 'a', content_type: 'text/plain' }))).toBe('413 payload_too_large');
    await uploads.register(A, { object: 'att_1', filename: 'a', content_type: 'text/plain' });
    expect(await code(uploads.register(B, { object: 'att_1', filename: 'a', content_type: 'text/plain' }))).toBe('409 conflict');
  });

  it('resolves its tenant’s uploads in order; another tenant’s or an unknown id is 404, an expired one 410', async () => {
    const { uploads, clock } = setUp({ att_1: { size: 5, digest }, att_2: { size: 5, digest } });
    await uploads.register(A, { object: 'att_1', filename: 'one', content_type: 'text/plain' });
    await uploads.register(A, { object: 'att_2', filename: 'two', content_type: 'text/plain' });
    expect((await uploads.resolve(A, ['att_2', 'att_1', 'att_2'])).map((r) => r.filename)).toEqual(['two', 'one', 'two']);
    expect(await code(uploads.resolve(B, ['att_1']))).toBe('404 not_found');
    expect(await code(uploads.resolve(A, ['att_1', 'att_x']))).toBe('404 not_found');
    clock.advance(24 * 3_600_000 - 1);
    expect(await code(uploads.resolve(A, ['att_1']))).toBe('ok');
    clock.advance(1);
    expect(await code(uploads.resolve(A, ['att_1']))).toBe('410 expired');
  });

  it('prunes rows an hour after they expired', async () => {
    const { uploads, clock, repo } = setUp({ att_1: { size: 5, digest } });
    await uploads.register(A, { object: 'att_1', filename: 'one', content_type: 'text/plain' });
    clock.advance(24.5 * 3_600_000);
    await uploads.prune();
    expect(repo.rows).toHaveLength(1);
    clock.advance(0.6 * 3_600_000);
    await uploads.prune();
    expect(repo.rows).toHaveLength(0);
  });

  it('reads the store’s digest as hex, and nothing else', () => {
    expect(sha256Hex(digest)).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(sha256Hex(`${digest}=`)).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(sha256Hex('SHA-512=abc')).toBeNull();
    expect(sha256Hex('SHA-256=short')).toBeNull();
  });
});
