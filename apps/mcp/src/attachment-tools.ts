/**
 * The tools that are more than one API call: get_attachment (text, else a signed link),
 * get_raw_message (the source as text, else a signed link) and upload_attachment (a JSON
 * argument made into the file the upload route takes).
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { attachmentSummary, isoTimestamp } from '@mailroom/contracts';
import type { Mailroom } from '@mailroom/sdk';
import { attachmentLink, attachmentText, rawLink, rawText, readsAsText } from './domain/attachment-answer';
import { InvalidArguments, type RequestParts, type ToolInputSchema } from './domain/tool-input';
import { uploadFile, uploadInput, uploadInputSchema } from './domain/upload-input';

export interface CustomTool {
  /** Replaces the input the operation would give. */
  input?: () => ToolInputSchema;
  run(mr: Mailroom, args: Record<string, unknown>, request: RequestParts): Promise<CallToolResult>;
}

const json = (value: unknown): CallToolResult => ({ content: [{ type: 'text', text: JSON.stringify(value, null, 2) }] });

/** What get_attachment needs of a message read: its attachments with their signed links. */
const messageLinks = z.object({ attachments: z.array(attachmentSummary), download_urls_expire_at: isoTimestamp.optional() });

async function getAttachment(mr: Mailroom, _args: Record<string, unknown>, { path }: RequestParts): Promise<CallToolResult> {
  const { inbox_id, message_id, attachment_id } = path;
  const { data } = await mr.call('mailbox.message.get', { path: { inbox_id, message_id } });
  const message = messageLinks.parse(data);
  const info = message.attachments.find((a) => a.attachment_id === attachment_id);
  // As the API answers an attachment id the message does not have.
  if (!info) throw Object.assign(new Error(`attachment not found: message ${String(message_id)} has no attachment ${String(attachment_id)}`), { status: 404, code: 'not_found' });
  if (readsAsText(info)) {
    const { data: bytes, response } = await mr.call('mailbox.attachment.get', { path, parseAs: 'arrayBuffer' });
    const text = attachmentText(new Uint8Array(bytes as ArrayBuffer), response.headers.get('content-type'));
    if (text !== undefined) return { content: [{ type: 'text', text }] };
  }
  const link = attachmentLink(info, message.download_urls_expire_at);
  if (!link) throw Object.assign(new Error('the API gave no download link for this attachment'), { status: 500, code: 'internal_error' });
  return json(link);
}

/** What get_raw_message needs of a message read: its signed raw link. */
const rawLinks = z.object({ raw_download_url: z.string().optional(), download_urls_expire_at: isoTimestamp.optional() });

async function getRawMessage(mr: Mailroom, _args: Record<string, unknown>, { path }: RequestParts): Promise<CallToolResult> {
  const { inbox_id, message_id } = path;
  const { data } = await mr.call('mailbox.message.raw', { path: { inbox_id, message_id }, parseAs: 'arrayBuffer' });
  const bytes = new Uint8Array(data as ArrayBuffer);
  const text = rawText(bytes);
  if (text !== undefined) return { content: [{ type: 'text', text }] };
  const { data: message } = await mr.call('mailbox.message.get', { path: { inbox_id, message_id } });
  const links = rawLinks.parse(message);
  if (!links.raw_download_url) throw Object.assign(new Error('the API gave no download link for this message'), { status: 500, code: 'internal_error' });
  return json(rawLink(bytes.length, links.raw_download_url, links.download_urls_expire_at));
}

async function uploadAttachment(mr: Mailroom, args: Record<string, unknown>): Promise<CallToolResult> {
  const parsed = uploadInput.safeParse(args);
  if (!parsed.success) throw new InvalidArguments(parsed.error.issues.map((i) => `${i.path.join('.') || 'arguments'}: ${i.message}`).join('; '));
  const { bytes, filename, contentType } = uploadFile(parsed.data);
  const { data } = await mr.mailbox.upload.register({ body: { file: new File([bytes], filename, { type: contentType }) } });
  return json(data);
}

export const CUSTOM_TOOLS: Record<string, CustomTool> = {
  get_attachment: { run: getAttachment },
  get_raw_message: { run: getRawMessage },
  upload_attachment: { input: uploadInputSchema, run: (mr, args) => uploadAttachment(mr, args) },
};
