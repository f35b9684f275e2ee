/**
 * A stored file (a raw message, an attachment) as MCP content a model can use: text when it is
 * text (decoded as UTF-8, or as its declared charset), an image when it is one (models see
 * those), else an embedded resource holding the bytes in base64.
 */

export type FileContent =
  | { type: 'text'; text: string }
  | { type: 'image'; data: string; mimeType: string }
  | { type: 'resource'; resource: { uri: string; mimeType: string; blob: string } };

const TEXT_TYPES = /^(text\/[\w.+-]+|message\/rfc822|message\/global|application\/(json|xml|csv|yaml|x-yaml|javascript|ecmascript|x-sh|sql|ld\+json|[\w.-]+\+(json|xml)))$/i;
const IMAGE_TYPES = /^image\/(png|jpeg|gif|webp)$/i;

/** The media type without parameters, lower case; and the charset it names. */
export function parseContentType(header: string | null): { mediaType: string; charset: string | undefined } {
  const [type = '', ...params] = (header ?? 'application/octet-stream').split(';');
  const charset = params.map((p) => /^\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(p)?.[1]).find(Boolean);
  return { mediaType: type.trim().toLowerCase() || 'application/octet-stream', charset };
}

/** Whether a media type (parameters allowed) is one a model reads as text. */
export const isTextType = (contentType: string | null): boolean => TEXT_TYPES.test(parseContentType(contentType).mediaType);

/** The bytes as text in their charset (UTF-8 when none is named); undefined when they are not. */
export function decodeText(bytes: Uint8Array, charset: string | undefined): string | undefined {
  try {
    return new TextDecoder(charset ?? 'utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** `uri` names the file for a resource (mailroom://inboxes/.../attachments/...). */
export function fileContent(bytes: Uint8Array, contentTypeHeader: string | null, uri: string): FileContent[] {
  const { mediaType, charset } = parseContentType(contentTypeHeader);
  if (TEXT_TYPES.test(mediaType)) {
    const text = decodeText(bytes, charset);
    if (text !== undefined) return [{ type: 'text', text }];
  }
  const data = Buffer.from(bytes).toString('base64');
  if (IMAGE_TYPES.test(mediaType)) return [{ type: 'image', data, mimeType: mediaType }];
  return [{ type: 'resource', resource: { uri, mimeType: mediaType, blob: data } }];
}
