/**
 * Runs in a worker thread (piscina): parses one raw message with mailparser and computes
 * extracted_text, off the service's event loop. A pathological message can only stall or
 * exhaust this worker, which the pool kills at the task's deadline.
 */
import { simpleParser, type AddressObject, type ParsedMail as MailparserMail } from 'mailparser';
import { extractHtml } from '../domain/extract-html';
import { extractText } from '../domain/extract-text';
import { decodeFlowedParts } from './flowed';
import type { ParsedAddress, ParsedMail } from './parsed-mail';

export interface ParseTask {
  raw: Uint8Array;
  /** Parse only the header block (the fallback after a full parse failed). */
  headersOnly?: boolean;
  maxHtmlBytes: number;
}

function addresses(value: AddressObject | AddressObject[] | undefined): ParsedAddress[] {
  const list = value === undefined ? [] : Array.isArray(value) ? value : [value];
  const out: ParsedAddress[] = [];
  for (const group of list) {
    for (const entry of group.value) {
      // Group syntax ("undisclosed-recipients:;") nests members.
      for (const a of entry.group ?? [entry]) if (a.address) out.push({ address: a.address.toLowerCase(), name: a.name ?? '' });
    }
  }
  return out;
}

function stripAngles(id: string | undefined): string | null {
  const v = id?.trim().replace(/^<|>$/g, '');
  return v ? v : null;
}

function referencesOf(refs: string | string[] | undefined): string[] {
  const list = refs === undefined ? [] : Array.isArray(refs) ? refs : refs.split(/\s+/);
  return list.map(stripAngles).filter((r): r is string => r !== null).slice(-100);
}

export default async function parse(task: ParseTask): Promise<ParsedMail> {
  let raw = Buffer.from(task.raw.buffer, task.raw.byteOffset, task.raw.byteLength);
  if (task.headersOnly) {
    const end = raw.indexOf('\r\n\r\n');
    raw = Buffer.concat([raw.subarray(0, end === -1 ? Math.min(raw.length, 256 * 1024) : end), Buffer.from('\r\n\r\n')]);
  } else {
    raw = await decodeFlowedParts(raw);
  }
  const mail: MailparserMail = await simpleParser(raw, {
    skipTextToHtml: true,
    skipTextLinks: true,
    skipImageLinks: true,
    skipHtmlToText: true,
    maxHtmlLengthToParse: task.maxHtmlBytes,
  });
  const text = mail.text ?? '';
  const html = typeof mail.html === 'string' ? mail.html : '';
  let extracted: string | null = null;
  try {
    extracted = extractText({ text, html, subject: mail.subject });
  } catch {
    extracted = null;
  }
  let extractedHtml: string | null = null;
  try {
    extractedHtml = html ? extractHtml(html) : null;
  } catch {
    extractedHtml = null;
  }
  const from = addresses(mail.from)[0] ?? null;
  return {
    subject: mail.subject ?? '',
    message_id: stripAngles(mail.messageId),
    in_reply_to: stripAngles(mail.inReplyTo?.split(/\s+/)[0]),
    references: referencesOf(mail.references),
    from,
    reply_to: addresses(mail.replyTo),
    to: addresses(mail.to),
    cc: addresses(mail.cc),
    text,
    html,
    extracted_text: extracted,
    extracted_html: extractedHtml,
    attachments: task.headersOnly
      ? []
      : mail.attachments.map((a) => ({
          filename: a.filename ?? null,
          content_type: a.contentType || 'application/octet-stream',
          size: a.size,
          content_id: stripAngles(a.contentId),
          disposition: a.contentDisposition ?? null,
          checksum: a.checksum,
          content: new Uint8Array(a.content.buffer, a.content.byteOffset, a.content.byteLength),
        })),
    error: task.headersOnly ? 'only the headers could be read' : null,
  };
}
