import { attachmentLink, attachmentText, rawLink, rawText, readsAsText, TEXT_MAX_BYTES } from './attachment-answer';

const csv = { attachment_id: 'att_1', filename: 'a.csv', content_type: 'text/csv', size: 12, download_url: 'https://api.test/api/v1/downloads/t1' };
const pdf = { ...csv, filename: 'a.pdf', content_type: 'application/pdf', size: 5_000_000 };

describe('an attachment as get_attachment answers it', () => {
  it('is read as text when its type is text and it is small enough', () => {
    expect(readsAsText(csv)).toBe(true);
    expect(readsAsText({ ...csv, content_type: 'application/json' })).toBe(true);
    expect(readsAsText({ ...csv, size: TEXT_MAX_BYTES + 1 })).toBe(false);
    expect(readsAsText(pdf)).toBe(false);
    expect(readsAsText({ ...csv, content_type: 'image/png' })).toBe(false);
  });

  it('decodes in the charset its Content-Type names, and gives up on bytes that are not text', () => {
    expect(attachmentText(Uint8Array.from([0x63, 0x61, 0x66, 0xe9]), 'text/plain; charset=iso-8859-1')).toBe('café');
    expect(attachmentText(new TextEncoder().encode('sku,qty'), 'text/csv')).toBe('sku,qty');
    expect(attachmentText(Uint8Array.from([0xff, 0xfe, 0x00]), 'text/plain')).toBeUndefined();
  });

  it('is otherwise its signed link, with when it expires and why it is a link', () => {
    expect(attachmentLink(pdf, '2026-01-01T00:00:00.000Z')).toEqual({
      attachment_id: 'att_1',
      filename: 'a.pdf',
      content_type: 'application/pdf',
      size: 5_000_000,
      download_url: 'https://api.test/api/v1/downloads/t1',
      expires_at: '2026-01-01T00:00:00.000Z',
      note: expect.stringContaining('not text'),
    });
    expect(attachmentLink({ ...csv, size: TEXT_MAX_BYTES + 1 }, undefined)?.note).toContain('larger than 256 KiB');
    expect(attachmentLink(csv, undefined)?.note).toContain('does not decode');
    expect(attachmentLink({ ...pdf, download_url: undefined }, undefined)).toBeUndefined();
  });

  it('is, for a raw message, its source as text up to the bound, else a link saying why', () => {
    expect(rawText(new TextEncoder().encode('Subject: hi\r\n\r\nbody'))).toBe('Subject: hi\r\n\r\nbody');
    expect(rawText(new Uint8Array(TEXT_MAX_BYTES + 1).fill(0x61))).toBeUndefined();
    expect(rawText(Uint8Array.from([0x53, 0xe9, 0x0a]))).toBeUndefined();
    expect(rawLink(TEXT_MAX_BYTES + 1, 'https://api.test/api/v1/downloads/r1', '2026-01-01T00:00:00.000Z')).toEqual({
      size: TEXT_MAX_BYTES + 1,
      download_url: 'https://api.test/api/v1/downloads/r1',
      expires_at: '2026-01-01T00:00:00.000Z',
      note: expect.stringContaining('larger than 256 KiB'),
    });
    expect(rawLink(10, 'u', undefined).note).toContain('not UTF-8');
  });
});
