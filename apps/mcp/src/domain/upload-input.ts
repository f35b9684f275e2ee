/**
 * upload_attachment's input. The API's upload takes the file itself (multipart or raw bytes),
 * which a JSON tool argument cannot be; so the tool takes the contracts' inline attachment
 * (filename, content_type, content_base64: what a send takes inline), and content_text as the
 * alternative to base64 for text a model writes. The answer's attachment_id goes into a send's
 * attachments as {attachment_id} for 24 hours.
 */
import { z } from 'zod';
import { attachmentUpload } from '@mailroom/contracts';
import type { ToolInputSchema } from './tool-input';

export const uploadInput = attachmentUpload
  .extend({
    content_base64: attachmentUpload.shape.content_base64.optional().describe('The file, base64-encoded (a binary file). Give this or content_text.'),
    content_text: z.string().optional().describe('The file as text, stored as UTF-8 (a CSV, a report, JSON). Give this or content_base64.'),
    content_type: attachmentUpload.shape.content_type.describe('A MIME type such as text/csv or application/pdf; default text/plain for content_text, application/octet-stream for content_base64.'),
  })
  .superRefine((v, ctx) => {
    if ((v.content_base64 === undefined) === (v.content_text === undefined)) ctx.addIssue({ code: 'custom', path: ['content_base64'], message: 'give content_base64 or content_text, one of them' });
  });

export type UploadInput = z.output<typeof uploadInput>;

/** The JSON Schema the tool lists: the contract's shape, as input. */
export function uploadInputSchema(): ToolInputSchema {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(uploadInput, { io: 'input' }) as Record<string, unknown>;
  return { ...schema, type: 'object', properties: (schema.properties ?? {}) as ToolInputSchema['properties'], additionalProperties: false };
}

/** The file as the API's upload takes it: bytes, a name and a type. */
export function uploadFile(input: UploadInput): { bytes: Uint8Array; filename: string; contentType: string } {
  const text = input.content_text;
  const bytes = text !== undefined ? new TextEncoder().encode(text) : Buffer.from(input.content_base64 ?? '', 'base64');
  const contentType = input.content_type ?? (text !== undefined ? 'text/plain' : 'application/octet-stream');
  return { bytes: new Uint8Array(bytes), filename: input.filename, contentType };
}
