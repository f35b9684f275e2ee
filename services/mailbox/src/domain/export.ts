/**
 * The organization's mail for its export (issue 28, part 4): inboxes, threads, messages and
 * attachments, one resource a page, and the files the archive holds beside them: every raw
 * message (`messages/<inbox_id>/<message_id>.eml`, byte for byte from the bucket it is in)
 * and every attachment (`attachments/<message_id>/<attachment_id>.bin`). Asked by the admin
 * service alone (the bus permissions), which reads the objects itself.
 */
import { toExportPage, type ExportFile, type ExportPage, type ExportResource, type ExportPageQuery } from '@mailroom/contracts';
import type { MailboxExportRepository } from '../repo/export.repository';
import type { ReceivedRaws } from './ports';

export function messageFile(m: { id: string; inbox_id: string }): string {
  return `messages/${m.inbox_id}/${m.id}.eml`;
}

export function attachmentFile(a: { id: string; message_id: string }): string {
  return `attachments/${a.message_id}/${a.id}.bin`;
}

export class MailboxExport {
  constructor(
    private readonly repo: Pick<MailboxExportRepository, keyof MailboxExportRepository>,
    private readonly received: ReceivedRaws,
  ) {}

  async page(req: { org_id: string; resource: ExportResource<'mailbox'>; limit: number; page_token?: string | undefined }): Promise<ExportPage> {
    const q: ExportPageQuery = { orgId: req.org_id, after: req.page_token, limit: req.limit + 1 };
    switch (req.resource) {
      case 'inboxes':
        return toExportPage(await this.repo.inboxes(q), req.limit, (r) => ({ ...r }));
      case 'threads':
        return toExportPage(await this.repo.threads(q), req.limit, (r) => ({ ...r }));
      case 'messages': {
        const rows = await this.repo.messages(q);
        const files = new Map<string, ExportFile>();
        // What was sent is in mail-send's bucket; what was received in mail-ingest's, or in mailbox's when it came inside its work item (as the raw route).
        for (const m of rows.slice(0, req.limit)) {
          const bucket = m.direction === 'outbound' ? 'sent' : (await this.received.has(m.raw_id)) ? 'received' : 'raw';
          files.set(m.id, { path: messageFile(m), bucket, object: m.raw_id });
        }
        return toExportPage(rows, req.limit, (m) => ({ ...m, file: messageFile(m) }), (m) => [files.get(m.id)!]);
      }
      case 'attachments':
        return toExportPage(
          await this.repo.attachments(q),
          req.limit,
          ({ object_name: _object, ...a }) => ({ ...a, file: attachmentFile(a) }),
          (a) => [{ path: attachmentFile(a), bucket: 'attachments', object: a.object_name }],
        );
    }
  }
}
