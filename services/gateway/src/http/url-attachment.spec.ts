import { contentTypeOf, filenameOf, withUrlAttachments } from './url-attachment';

describe('attachments given by URL', () => {
  it('names the file after the last path segment, decoded, or "attachment" when that is no file name', () => {
    expect(filenameOf(new URL('https://files.example.com/reports/q3%20report.pdf?sig=1'))).toBe('q3 report.pdf');
    expect(filenameOf(new URL('https://files.example.com/'))).toBe('attachment');
    expect(filenameOf(new URL('https://files.example.com/a/%2e%2e%2fetc%2fpasswd'))).toBe('attachment');
    expect(filenameOf(new URL('https://files.example.com/%E0%A4%A'))).toBe('attachment');
  });

  it('takes the content type the server answered, without parameters, when it is one', () => {
    expect(contentTypeOf('Application/PDF; charset=binary')).toBe('application/pdf');
    expect(contentTypeOf('not a type')).toBeUndefined();
    expect(contentTypeOf(null)).toBeUndefined();
  });

  it('replaces each {url} attachment, in order, and leaves a request without one as it is', async () => {
    const asked: string[] = [];
    const fetchOne = async (a: { url: string }, where: string) => {
      asked.push(`${where} ${a.url}`);
      return { attachment_id: `att_${asked.length}` };
    };
    const none = { to: ['a@b.test'], attachments: [{ attachment_id: 'att_x' }] };
    expect(await withUrlAttachments(none, fetchOne)).toBe(none);
    const mixed = { text_body: 'x', attachments: [{ url: 'https://a.test/1.pdf' }, { attachment_id: 'att_x' }, { url: 'https://a.test/2.pdf', filename: 'two.pdf' }] };
    expect(await withUrlAttachments(mixed, fetchOne)).toEqual({ text_body: 'x', attachments: [{ attachment_id: 'att_1' }, { attachment_id: 'att_x' }, { attachment_id: 'att_2' }] });
    expect(asked).toEqual(['attachments.0 https://a.test/1.pdf', 'attachments.2 https://a.test/2.pdf']);
  });
});
