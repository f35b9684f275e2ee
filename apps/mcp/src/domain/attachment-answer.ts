/**
 * How get_attachment answers: the attachment's text when a model can read it (a text type, at
 * most TEXT_MAX_BYTES, decoding in its charset), else the API's signed download link, which
 * needs no API key until it expires, so the bytes go where they are needed (a browser, a tool
 * that reads files) instead of into the model's context as base64.
 */
import { decodeText, isTextType, parseContentType } from './file-content';

/** Larger text is a link too: a model's context holds a few hundred kilobytes at most. */
export const TEXT_MAX_BYTES = 256 * 1024;

export interface AttachmentInfo {
  attachment_id: string;
  filename: string | null;
  content_type: string;
  size: number;
  download_url?: string | undefined;
}

export interface AttachmentLink {
  attachment_id: string;
  filename: string | null;
  content_type: string;
  size: number;
  download_url: string;
  expires_at: string | undefined;
  note: string;
}

/** Whether the bytes are worth fetching to answer as text. */
export const readsAsText = (a: AttachmentInfo): boolean => isTextType(a.content_type) && a.size <= TEXT_MAX_BYTES;

/** The text of the fetched bytes in the charset their Content-Type names; undefined when they do not decode. */
export const attachmentText = (bytes: Uint8Array, contentTypeHeader: string | null): string | undefined => decodeText(bytes, parseContentType(contentTypeHeader).charset);

export function attachmentLink(a: AttachmentInfo, expiresAt: string | undefined): AttachmentLink | undefined {
  if (!a.download_url) return undefined;
  const why = !isTextType(a.content_type) ? 'not text' : a.size > TEXT_MAX_BYTES ? `text larger than ${TEXT_MAX_BYTES / 1024} KiB` : 'text that does not decode in its charset';
  return {
    attachment_id: a.attachment_id,
    filename: a.filename,
    content_type: a.content_type,
    size: a.size,
    download_url: a.download_url,
    expires_at: expiresAt,
    note: `The file is ${why}, so it is given as a link: a plain GET of download_url returns its bytes, with no Authorization header, until expires_at (call get_attachment again for a fresh link).`,
  };
}

/**
 * How get_raw_message answers: the source as text up to TEXT_MAX_BYTES (a message with a large
 * attachment would flood the model's context), else undefined, and the tool gives the
 * message's signed raw_download_url instead.
 */
export function rawText(bytes: Uint8Array): string | undefined {
  return bytes.length > TEXT_MAX_BYTES ? undefined : decodeText(bytes, undefined);
}

export interface RawLink {
  size: number;
  download_url: string;
  expires_at: string | undefined;
  note: string;
}

export function rawLink(size: number, url: string, expiresAt: string | undefined): RawLink {
  const why = size > TEXT_MAX_BYTES ? `larger than ${TEXT_MAX_BYTES / 1024} KiB` : 'not UTF-8 text';
  return {
    size,
    download_url: url,
    expires_at: expiresAt,
    note: `The message source is ${why}, so it is given as a link: a plain GET of download_url returns it (message/rfc822), with no Authorization header, until expires_at. get_message has its text, HTML and attachments.`,
  };
}
