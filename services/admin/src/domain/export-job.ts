/**
 * One organization's export written into one archive (issue 28, part 4). For each resource
 * of EXPORT_RESOURCES, in order, it pages through the service that holds it and writes
 * `<service>/<resource>.ndjson`, one JSON object a line; then, for a resource whose records
 * point to stored bytes (raw messages, attachments), pages through it again and copies each
 * file into the archive as it streams from the object store. `manifest.json` comes last.
 * Memory holds one page and one chunk at a time, whatever the organization's size: pages
 * are asked for only when the archive has taken the previous one (the archive asks for
 * content as the object store takes its output).
 */
import { EXPORT_RESOURCES, USER_PROFILES_MAX, type ExportPage, type ExportService, type UserProfile } from '@mailroom/contracts';
import type { ExportProgress } from '../repo/export.repository';
import type { ArchiveWriter, ExportSources, StoredFiles } from './export-ports';

export const MANIFEST_FORMAT = 'mailroom-org-export';

/** Every resource, in the order the archive holds them. */
export const EXPORT_PLAN: readonly { service: ExportService; resource: string }[] = (Object.keys(EXPORT_RESOURCES) as ExportService[]).flatMap((service) =>
  EXPORT_RESOURCES[service].map((resource) => ({ service, resource })),
);

export interface ExportRun {
  exportId: string;
  orgId: string;
  createdAt: Date;
}

export class ExportJob {
  constructor(
    private readonly sources: ExportSources,
    private readonly stored: StoredFiles,
  ) {}

  /**
   * Writes the organization into `archive` (left open: the caller finishes or aborts it).
   * `report` is given the progress after every page; `signal` stops the run between pages.
   */
  async run(run: ExportRun, archive: ArchiveWriter, report: (p: ExportProgress) => Promise<void>, signal: AbortSignal): Promise<ExportProgress> {
    const progress: ExportProgress = { resources_done: 0, current_resource: null, records: 0, files: 0, bytes: 0 };
    const resources: { path: string; records: number }[] = [];
    let missing = 0;
    const tick = async () => {
      signal.throwIfAborted();
      progress.bytes = archive.bytes;
      await report({ ...progress });
    };

    for (const { service, resource } of EXPORT_PLAN) {
      const name = `${service}/${resource}`;
      progress.current_resource = name;
      await tick();
      let records = 0;
      let hasFiles = false;
      const lines = this.lines(service, resource, run.orgId, signal, async (page) => {
        records += page.data.length;
        progress.records += page.data.length;
        hasFiles ||= page.files.length > 0;
        await tick();
      });
      await archive.add(`${name}.ndjson`, lines);
      resources.push({ path: `${name}.ndjson`, records });
      if (hasFiles) {
        for await (const page of this.pages(service, resource, run.orgId, signal)) {
          for (const file of page.files) {
            const content = await this.stored.open(file);
            if (!content) {
              missing++;
              continue;
            }
            await archive.add(file.path, content);
            progress.files++;
          }
          await tick();
        }
      }
      progress.resources_done++;
    }
    progress.current_resource = null;
    const manifest = {
      format: MANIFEST_FORMAT,
      version: 1,
      export_id: run.exportId,
      org_id: run.orgId,
      created_at: run.createdAt.toISOString(),
      resources,
      files: progress.files,
      missing_files: missing,
    };
    await archive.add('manifest.json', once(Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`)));
    progress.bytes = archive.bytes;
    return progress;
  }

  /** The resource's pages, each asked for once the previous one was taken. */
  private async *pages(service: ExportService, resource: string, orgId: string, signal: AbortSignal): AsyncGenerator<ExportPage> {
    let token: string | undefined;
    do {
      signal.throwIfAborted();
      const page = await this.sources.page(service, resource, orgId, token);
      yield service === 'orgs' && resource === 'members' ? await this.withPeople(page) : page;
      token = page.next_page_token ?? undefined;
    } while (token);
  }

  /** NDJSON of the resource, a page at a time; `onPage` after each page is written. */
  private async *lines(service: ExportService, resource: string, orgId: string, signal: AbortSignal, onPage: (page: ExportPage) => Promise<void>): AsyncGenerator<Uint8Array> {
    for await (const page of this.pages(service, resource, orgId, signal)) {
      if (page.data.length > 0) yield Buffer.from(page.data.map((r) => `${JSON.stringify(r)}\n`).join(''));
      await onPage(page);
    }
  }

  /** Members with the person's name and email (auth holds people; orgs their memberships). */
  private async withPeople(page: ExportPage): Promise<ExportPage> {
    const ids = [...new Set(page.data.map((m) => m['user_id']).filter((id): id is string => typeof id === 'string'))];
    const found: UserProfile[] = [];
    for (let i = 0; i < ids.length; i += USER_PROFILES_MAX) found.push(...(await this.sources.profiles(ids.slice(i, i + USER_PROFILES_MAX))));
    const people = new Map(found.map((p) => [p.id, p]));
    return { ...page, data: page.data.map((m) => ({ ...m, user: people.get(String(m['user_id'])) ?? null })) };
  }
}

async function* once(chunk: Uint8Array): AsyncGenerator<Uint8Array> {
  yield chunk;
}
