import { contentDisposition, contentType } from './download';

describe('contentDisposition', () => {
  it('gives an ASCII fallback and the UTF-8 name', () => {
    expect(contentDisposition(null)).toBe('attachment');
    expect(contentDisposition('résumé "final".pdf')).toBe(`attachment; filename="r_sum_ _final_.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22final%22.pdf`);
  });

  it('survives a stored name with an unpaired surrogate', () => {
    expect(contentDisposition('a\ud800.txt')).toBe(`attachment; filename="a_.txt"; filename*=UTF-8''a%EF%BF%BD.txt`);
  });
});

describe('contentType', () => {
  it('keeps a media type, and sends anything a header cannot carry as bytes', () => {
    expect(contentType('application/pdf')).toBe('application/pdf');
    expect(contentType('text/plain; charset="utf-8"')).toBe('text/plain; charset="utf-8"');
    expect(contentType('text/plain\r\nX-Injected: 1')).toBe('application/octet-stream');
    expect(contentType('image/pngé')).toBe('application/octet-stream');
    expect(contentType('nonsense')).toBe('application/octet-stream');
  });
});
