import type { MailboxExportRepository } from '../repo/export.repository';
import { MailboxExport } from './export';

const ORG = 'org_01jzzzzzzzzzzzzzzzzzzzzzzz';
type Repo = Pick<MailboxExportRepository, keyof MailboxExportRepository>;

function message(id: string, direction: 'inbound' | 'outbound') {
  return { id, inbox_id: 'inb_1', direction, raw_id: `raw_${id}` };
}

describe("the mailbox's export", () => {
  it('points each message to its raw bytes where the raw route reads them: sent, received inside its work item, or received by the edge', async () => {
    const rows = [message('m1', 'outbound'), message('m2', 'inbound'), message('m3', 'inbound'), message('m4', 'inbound')];
    const repo = { messages: async () => rows } as unknown as Repo;
    const page = await new MailboxExport(repo, { has: async (raw) => raw === 'raw_m2' }).page({ org_id: ORG, resource: 'messages', limit: 3 });
    expect(page.files).toEqual([
      { path: 'messages/inb_1/m1.eml', bucket: 'sent', object: 'raw_m1' },
      { path: 'messages/inb_1/m2.eml', bucket: 'received', object: 'raw_m2' },
      { path: 'messages/inb_1/m3.eml', bucket: 'raw', object: 'raw_m3' },
    ]);
    expect(page.data.map((m) => m.file)).toEqual(['messages/inb_1/m1.eml', 'messages/inb_1/m2.eml', 'messages/inb_1/m3.eml']);
    expect(page.next_page_token).toBe('m3');
  });

  it('exports attachments with their file, without the object name of the bucket', async () => {
    const repo = { attachments: async () => [{ id: 'att_1', message_id: 'm1', filename: 'a.pdf', object_name: 'obj-1' }] } as unknown as Repo;
    const page = await new MailboxExport(repo, { has: async () => false }).page({ org_id: ORG, resource: 'attachments', limit: 10 });
    expect(page.data).toEqual([{ id: 'att_1', message_id: 'm1', filename: 'a.pdf', file: 'attachments/m1/att_1.bin' }]);
    expect(page.files).toEqual([{ path: 'attachments/m1/att_1.bin', bucket: 'attachments', object: 'obj-1' }]);
    expect(page.next_page_token).toBeNull();
  });
});
