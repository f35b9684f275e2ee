/**
 * The records of a domain as a BIND zone fragment (RFC 1035 master file syntax): every name
 * fully qualified (with its trailing dot), so it reads the same under any $ORIGIN; TXT text
 * quoted, with `"` and `\` escaped, in character-strings of at most 255 bytes (a 2048-bit
 * DKIM key is longer). Paste it into the domain's zone, or give it to the DNS host.
 */
import type { Domain, DomainRecord } from '@mailroom/contracts';

export const ZONE_TTL_SECONDS = 3600;
const MAX_STRING = 255;

const fqdn = (name: string) => `${name.replace(/\.$/, '')}.`;

/** `text` as quoted character-strings; split on whole characters (the TXT values here are ASCII). */
export function quoteTxt(text: string): string {
  const strings: string[] = [];
  let current = '';
  for (const ch of text) {
    if (Buffer.byteLength(current + ch) > MAX_STRING) {
      strings.push(current);
      current = '';
    }
    current += ch;
  }
  strings.push(current);
  return strings.map((s) => `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`).join(' ');
}

function line(r: DomainRecord): string {
  const owner = `${fqdn(r.name)}\t${ZONE_TTL_SECONDS}\tIN\t${r.type}\t`;
  switch (r.type) {
    case 'MX':
      return owner + `${r.priority ?? 10} ${fqdn(r.value)}`;
    case 'CNAME':
      return owner + fqdn(r.value);
    case 'TXT':
      return owner + quoteTxt(r.value);
  }
}

export function zoneFileOf(d: Domain): string {
  const out = [
    `; DNS records of ${d.domain_name} for Mailroom (${d.domain_id}).`,
    '; Required for verification: SPF and DKIM. Recommended: MX (mail to inboxes on the domain), DMARC, bounces.',
  ];
  for (const r of d.records) {
    out.push(`; ${r.kind}: ${r.purpose}${r.required ? ', required' : ''}; now ${r.status}${r.reason ? ` (${r.reason})` : ''}`);
    out.push(line(r));
  }
  return `${out.join('\n')}\n`;
}
