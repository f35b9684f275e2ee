import Ajv2020 from 'ajv/dist/2020';
import { uploadFile, uploadInput, uploadInputSchema } from './upload-input';

describe("upload_attachment's input", () => {
  it("is the contract's inline attachment as JSON Schema, content_text beside content_base64", () => {
    const schema = uploadInputSchema();
    expect(schema).toMatchObject({ type: 'object', required: ['filename'], additionalProperties: false });
    expect(Object.keys(schema.properties).sort()).toEqual(['content_base64', 'content_text', 'content_type', 'filename']);
    expect(schema).not.toHaveProperty('$schema');
    const validate = new Ajv2020({ strict: false, validateFormats: false }).compile(schema);
    expect(validate({ filename: 'a.csv', content_text: 'a,b' })).toBe(true);
    expect(validate({ filename: 'a.csv', colour: 'red' })).toBe(false);
  });

  it('takes one of content_text and content_base64, and a file name without a path', () => {
    expect(uploadInput.safeParse({ filename: 'a.txt' }).success).toBe(false);
    expect(uploadInput.safeParse({ filename: 'a.txt', content_text: 'x', content_base64: 'eA==' }).success).toBe(false);
    expect(uploadInput.safeParse({ filename: '../a.txt', content_text: 'x' }).success).toBe(false);
    expect(uploadInput.safeParse({ filename: 'a.txt', content_base64: 'not base64!' }).success).toBe(false);
  });

  it('makes the file: text as UTF-8 (text/plain unless typed), base64 decoded (octet-stream unless typed)', () => {
    const text = uploadFile(uploadInput.parse({ filename: 'r.csv', content_text: 'é', content_type: 'Text/CSV' }));
    expect([Buffer.from(text.bytes).toString('hex'), text.filename, text.contentType]).toEqual(['c3a9', 'r.csv', 'text/csv']);
    expect(uploadFile(uploadInput.parse({ filename: 'n.txt', content_text: 'x' })).contentType).toBe('text/plain');
    const bin = uploadFile(uploadInput.parse({ filename: 'b.bin', content_base64: 'AQID' }));
    expect([Array.from(bin.bytes), bin.contentType]).toEqual([[1, 2, 3], 'application/octet-stream']);
  });
});
