import type { ExportFile, ExportPage, ExportService } from '@mailroom/contracts';
import type { ArchiveWriter, ExportSources, StoredFiles } from './export-ports';
import { EXPORT_PLAN, ExportJob, MANIFEST_FORMAT } from './export-job';

const ORG = 'org_01jzzzzzzzzzzzzzzzzzzzzzzz';

/** Rows by `<service>/<resource>`, served two a page; files for rows that name one. */
function sources(rows: Record<string, { id: string; file?: ExportFile; user_id?: string }[]>, asked: string[]): ExportSources {
  return {
    page: async (service: ExportService, resource: string, _org: string, token: string | undefined): Promise<ExportPage> => {
      asked.push(`${service}/${resource}@${token ?? ''}`);
      const all = rows[`${service}/${resource}`] ?? [];
      const start = token ? all.findIndex((r) => r.id === token) + 1 : 0;
      const page = all.slice(start, start + 2);
      return {
        data: page.map(({ file: _f, ...r }) => r),
        files: page.flatMap((r) => (r.file ? [r.file] : [])),
        next_page_token: start + 2 < all.length ? page.at(-1)!.id : null,
      };
    },
    profiles: async (ids) => ids.map((id) => ({ id, email: `${id}@example.com`, name: null, email_verified: true })),
  };
}

/** An archive in memory: each entry read to the end as it is added, in order. */
class MemoryArchive implements ArchiveWriter {
  entries = new Map<string, Buffer>();
  bytes = 0;
  async add(path: string, content: AsyncIterable<Uint8Array>) {
    const chunks: Buffer[] = [];
    for await (const c of content) chunks.push(Buffer.from(c));
    const b = Buffer.concat(chunks);
    this.bytes += b.length;
    this.entries.set(path, b);
  }
  async finish() {
    return this.bytes;
  }
  abort() {}
}

async function* chunks(...parts: string[]): AsyncGenerator<Uint8Array> {
  for (const p of parts) yield Buffer.from(p);
}

const stored: StoredFiles = { open: async (f) => (f.object === 'gone' ? null : chunks(`raw of `, f.object)) };
const eml = (id: string, object = `raw_${id}`): ExportFile => ({ path: `messages/inb/${id}.eml`, bucket: 'raw', object });

describe('an export job', () => {
  it('writes NDJSON per resource, page after page, then the files its records point to, then the manifest', async () => {
    const asked: string[] = [];
    const archive = new MemoryArchive();
    const reports: number[] = [];
    const job = new ExportJob(
      sources(
        {
          'orgs/organization': [{ id: ORG }],
          'orgs/members': [{ id: 'mem_1', user_id: 'usr_1' }],
          'mailbox/messages': [{ id: 'm1', file: eml('m1') }, { id: 'm2', file: eml('m2') }, { id: 'm3', file: eml('m3', 'gone') }],
        },
        asked,
      ),
      stored,
    );
    const done = await job.run({ exportId: 'exp_1', orgId: ORG, createdAt: new Date('2026-11-26T10:00:00.000Z') }, archive, async (p) => void reports.push(p.records), new AbortController().signal);

    expect(archive.entries.get('mailbox/messages.ndjson')!.toString()).toBe('{"id":"m1"}\n{"id":"m2"}\n{"id":"m3"}\n');
    expect(archive.entries.get('orgs/members.ndjson')!.toString()).toBe(`${JSON.stringify({ id: 'mem_1', user_id: 'usr_1', user: { id: 'usr_1', email: 'usr_1@example.com', name: null, email_verified: true } })}\n`);
    expect(archive.entries.get('messages/inb/m1.eml')!.toString()).toBe('raw of raw_m1');
    expect(archive.entries.has('messages/inb/m3.eml')).toBe(false);
    expect([...archive.entries.keys()].at(-1)).toBe('manifest.json');
    // The messages were paged twice (records, then files), two a page.
    expect(asked.filter((a) => a.startsWith('mailbox/messages'))).toEqual(['mailbox/messages@', 'mailbox/messages@m2', 'mailbox/messages@', 'mailbox/messages@m2']);
    expect(EXPORT_PLAN.every(({ service, resource }) => archive.entries.has(`${service}/${resource}.ndjson`))).toBe(true);

    const manifest = JSON.parse(archive.entries.get('manifest.json')!.toString());
    expect(manifest).toMatchObject({ format: MANIFEST_FORMAT, version: 1, export_id: 'exp_1', org_id: ORG, files: 2, missing_files: 1 });
    expect(manifest.resources).toContainEqual({ path: 'mailbox/messages.ndjson', records: 3 });
    expect(done).toMatchObject({ resources_done: EXPORT_PLAN.length, current_resource: null, records: 5, files: 2 });
    expect(reports.at(-1)).toBe(5);
  });

  it('asks for a page only once the archive took the previous one', async () => {
    const asked: string[] = [];
    const job = new ExportJob(sources({ 'orgs/organization': [{ id: ORG }] }, asked), stored);
    const archive: ArchiveWriter = {
      bytes: 0,
      add: async () => {}, // never reads the content
      finish: async () => 0,
      abort: () => {},
    };
    await job.run({ exportId: 'exp_1', orgId: ORG, createdAt: new Date() }, archive, async () => {}, new AbortController().signal);
    expect(asked).toEqual([]);
  });

  it('stops between pages once aborted', async () => {
    const ctl = new AbortController();
    const job = new ExportJob(sources({ 'orgs/organization': [{ id: ORG }] }, []), stored);
    const run = job.run({ exportId: 'exp_1', orgId: ORG, createdAt: new Date() }, new MemoryArchive(), async (p) => {
      if (p.records > 0) ctl.abort(new Error('stopping'));
    }, ctl.signal);
    await expect(run).rejects.toThrow('stopping');
  });
});
