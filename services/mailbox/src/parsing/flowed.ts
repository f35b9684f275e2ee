/**
 * RFC 3676 format=flowed decoding that honours quote depth (section 4.5: a flowed line
 * followed by a line of another quote depth ends the paragraph). The decoder mailparser
 * uses (libmime's) joins "> Hi " with the next unquoted line, gluing new text onto quoted
 * text. So the parser hands mailparser a message whose flowed text parts are decoded here
 * already (decodeFlowedParts): each one the plain text it stands for, no longer flowed.
 */
import { pipeline } from 'node:stream/promises';
import { Joiner, Splitter, type MimeNode, type SplitterChunk } from '@zone-eu/mailsplit';

export function decodeFlowed(input: string, delSp: boolean): string {
  const out: string[] = [];
  let cur: { prefix: string; depth: number; text: string; flowing: boolean } | undefined;
  for (const raw of input.split(/\r?\n/)) {
    const depth = /^>*/.exec(raw)![0].length;
    let body = raw.slice(depth);
    if (body.startsWith(' ')) body = body.slice(1); // space-stuffing or the quote's space
    const prefix = raw.slice(0, raw.length - body.length);
    const flowing = body !== '-- ' && body.endsWith(' ');
    if (cur && cur.flowing && cur.depth === depth) {
      cur.text += body;
    } else {
      if (cur) out.push(cur.prefix + cur.text);
      cur = { prefix, depth, text: body, flowing };
    }
    cur.flowing = flowing;
    if (flowing && delSp) cur.text = cur.text.slice(0, -1);
  }
  if (cur) out.push(cur.prefix + cur.text);
  return out.join('\n');
}

// The parts mailparser reads as the message's text (and flow-decodes): inline text, not attachments.
const TEXT_TYPES = ['text/plain', 'text/html', 'message/delivery-status'];

function readAsFlowedText(node: MimeNode): boolean {
  const type = node.contentType || (node.root ? 'text/plain' : '');
  return node.flowed && TEXT_TYPES.includes(type) && (!node.disposition || node.disposition === 'inline');
}

/**
 * The message with each flowed text part replaced by its decoded text (base64, format=flowed
 * dropped), split and joined again by the MIME splitter mailparser uses, so every other byte
 * is as it was; `raw` itself when it has no such part or cannot be split.
 */
export async function decodeFlowedParts(raw: Buffer): Promise<Buffer> {
  if (!/flowed/i.test(raw.toString('latin1'))) return raw;
  let rewritten = 0;
  async function* rewrite(chunks: AsyncIterable<SplitterChunk>): AsyncGenerator<SplitterChunk> {
    let flowed: { node: MimeNode; body: Buffer[] } | undefined;
    for await (const chunk of chunks) {
      if (flowed && chunk.type === 'body') {
        flowed.body.push(chunk.value);
        continue;
      }
      if (flowed) yield* await unflowed(flowed.node, flowed.body);
      flowed = undefined;
      if (chunk.type === 'node' && readAsFlowedText(chunk)) {
        flowed = { node: chunk, body: [] };
        rewritten++;
      } else yield chunk;
    }
    if (flowed) yield* await unflowed(flowed.node, flowed.body);
  }
  const joined: Buffer[] = [];
  try {
    await pipeline([raw], new Splitter(), rewrite, new Joiner(), async (bytes: AsyncIterable<Buffer>) => {
      for await (const b of bytes) joined.push(b);
    });
    return rewritten > 0 ? Buffer.concat(joined) : raw;
  } catch {
    return raw; // mailparser meets the same problem and reports it
  }
}

/** A flowed text node as plain text: its header and the body, decoded and encoded anew. */
async function unflowed(node: MimeNode, body: Buffer[]): Promise<SplitterChunk[]> {
  const decoded = Buffer.concat(await node.getDecoder().end(Buffer.concat(body)).toArray());
  const text = Buffer.from(decodeFlowed(decoded.toString('binary'), node.delSp), 'binary');
  node.flowed = false;
  node.delSp = false;
  node.setContentType(); // drops format and delsp
  const encoded = Buffer.concat(await node.getEncoder('base64').end(text).toArray());
  return [node, { node, type: 'body', value: Buffer.concat([encoded, Buffer.from('\r\n')]) }];
}
