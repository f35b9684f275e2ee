/**
 * RFC 3676 format=flowed decoding that honours quote depth (section 4.5: a flowed line
 * followed by a line of another quote depth ends the paragraph). The decoder mailparser
 * uses (libmime's) joins "> Hi " with the next unquoted line, gluing new text onto quoted
 * text; parse workers install this one in its place (installFlowedDecoder).
 */
import path from 'node:path';

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

/** Replaces libmime's flowed decoder (the instance mailparser's splitter uses). Call once per worker. */
export function installFlowedDecoder(): void {
  const fromMailparser = path.dirname(require.resolve('mailparser'));
  const splitter = path.dirname(require.resolve('@zone-eu/mailsplit/lib/flowed-decoder.js', { paths: [fromMailparser] }));
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the very module instance mailparser loads
  const libmime = require(require.resolve('libmime', { paths: [splitter] })) as { Libmime: { prototype: { decodeFlowed: (s: string, d: boolean) => string } } };
  libmime.Libmime.prototype.decodeFlowed = (s: string, d: boolean) => decodeFlowed(s, d);
}
