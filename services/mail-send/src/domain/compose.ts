/**
 * Composing an outbound message: MIME from nodemailer's composer (headers are encoded by it,
 * so a header value cannot inject another header). It is then signed (./dkim).
 */
import MailComposer from 'nodemailer/lib/mail-composer';
import type { Readable } from 'node:stream';
import type { OutboundJob } from '@mailroom/contracts';

function bracketed(id: string): string {
  return `<${id}>`;
}

/** Opens an attachment's bytes (an object of the attachments bucket) as a stream; null when it is gone. */
export type AttachmentSource = (object: string) => Promise<Readable | null>;

export class MissingAttachment extends Error {
  override name = 'MissingAttachment';
}

/**
 * The message as a stream: the composer encodes each attachment as it is read, so memory
 * does not grow with their size. Every attachment is looked up first: a missing one is
 * refused before a byte is produced.
 */
export async function compose(job: OutboundJob, attachments: AttachmentSource): Promise<Readable> {
  const files = [];
  for (const a of job.attachments) {
    const content = await attachments(a.object);
    // A stored message refers to it, so it must exist: sending without it would be a silent loss.
    if (!content) {
      for (const f of files) f.content.destroy();
      throw new MissingAttachment(`attachment object ${a.object} of message ${job.message_id} is missing`);
    }
    files.push({
      ...(a.filename ? { filename: a.filename } : {}),
      contentType: a.content_type,
      content,
      ...(a.content_id ? { cid: a.content_id } : {}),
    });
  }
  const composer = new MailComposer({
    from: job.from.name ? { name: job.from.name, address: job.from.address } : job.from.address,
    to: job.to,
    ...(job.cc.length ? { cc: job.cc } : {}),
    subject: job.subject,
    text: job.text_body,
    ...(job.html_body ? { html: job.html_body } : {}),
    messageId: bracketed(job.message_id_header),
    ...(job.in_reply_to ? { inReplyTo: bracketed(job.in_reply_to) } : {}),
    ...(job.references.length ? { references: job.references.map(bracketed) } : {}),
    date: new Date(job.created_at),
    ...(files.length ? { attachments: files } : {}),
    // X- names only (checked at the API); the composer encodes values, so no line can be injected.
    ...(Object.keys(job.headers).length ? { headers: job.headers } : {}),
    // Bcc recipients are in the envelope only: the composer leaves the header out.
  });
  return composer.compile().createReadStream();
}
