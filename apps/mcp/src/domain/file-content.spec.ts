import { fileContent, parseContentType } from './file-content';

const bytes = (s: string) => new TextEncoder().encode(s);

describe('a stored file as MCP content', () => {
  it('is text when it is text in its charset', () => {
    expect(fileContent(bytes('a,b\n1,2\n'), 'text/csv; charset=utf-8', 'mailroom:/x')).toEqual([{ type: 'text', text: 'a,b\n1,2\n' }]);
    expect(fileContent(bytes('{"a":1}'), 'application/json', 'mailroom:/x')).toEqual([{ type: 'text', text: '{"a":1}' }]);
    expect(fileContent(Uint8Array.from([0x63, 0x61, 0x66, 0xe9]), 'text/plain; charset="iso-8859-1"', 'mailroom:/x')).toEqual([{ type: 'text', text: 'café' }]);
    expect(fileContent(bytes('From: a@b\r\n\r\nhi'), 'message/rfc822', 'mailroom:/x')).toEqual([{ type: 'text', text: 'From: a@b\r\n\r\nhi' }]);
  });

  it('is an image when it is one, else an embedded base64 resource (also text that does not decode)', () => {
    expect(fileContent(Uint8Array.from([1, 2, 3]), 'image/png', 'mailroom:/a')).toEqual([{ type: 'image', data: 'AQID', mimeType: 'image/png' }]);
    expect(fileContent(Uint8Array.from([1, 2, 3]), 'application/pdf', 'mailroom:/a')).toEqual([{ type: 'resource', resource: { uri: 'mailroom:/a', mimeType: 'application/pdf', blob: 'AQID' } }]);
    expect(fileContent(Uint8Array.from([0xff, 0xfe, 0x00]), 'text/plain', 'mailroom:/a')).toEqual([{ type: 'resource', resource: { uri: 'mailroom:/a', mimeType: 'text/plain', blob: '//4A' } }]);
    expect(parseContentType(null)).toEqual({ mediaType: 'application/octet-stream', charset: undefined });
  });
});
