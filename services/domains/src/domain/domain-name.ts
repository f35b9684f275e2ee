/**
 * A domain name as a customer types it, made into the one form we store and compare: IDNA
 * A-labels (node:url's domainToASCII, UTS #46), lower case, without the trailing dot. Refused
 * with a 400 that says why: IP literals, labels DNS cannot hold, names not under a suffix of
 * the public suffix list (tldts, which ships the list), a public suffix alone (`co.uk`,
 * `github.io`: nobody owns those), and the platform's own mail domain.
 */
import { domainToASCII } from 'node:url';
import { parse } from 'tldts';
import { AppError } from '@mailroom/contracts';

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
/** Characters no host name holds, refused before IDNA mapping could drop or change them. */
const NOT_IN_A_NAME = /[\s/\\@:*?#%[\]<>"'`,;()|!$&+={}^~]/u;

function invalid(name: string, why: string): AppError {
  return new AppError('invalid_request', `${JSON.stringify(name)} is not a domain name you can add: ${why}`, { details: [{ path: 'domain_name', message: why }] });
}

/** `ownDomain`: MAIL_DOMAIN, whose mail the platform itself receives and signs. */
export function normalizeDomainName(input: string, ownDomain: string): string {
  const typed = input.trim();
  if (typed.length === 0) throw invalid(input, 'it is empty');
  if (NOT_IN_A_NAME.test(typed)) throw invalid(typed, 'it holds a character no domain name has (a URL, an address or a wildcard is not a domain name)');
  // One trailing dot is the root, as DNS writes a fully qualified name; anything more is a typo.
  const bare = typed.endsWith('.') ? typed.slice(0, -1) : typed;
  if (bare.startsWith('.') || bare.includes('..') || bare.endsWith('.')) throw invalid(typed, 'it has an empty label (two dots in a row, or a dot at the start)');
  if (parse(bare).isIp) throw invalid(typed, 'it is an IP address; give a domain name');
  const ascii = domainToASCII(bare);
  if (!ascii) throw invalid(typed, 'it is not a valid internationalized domain name (IDNA)');
  const parsed = parse(ascii, { allowPrivateDomains: true });
  if (parsed.isIp) throw invalid(typed, 'it is an IP address; give a domain name');
  const labels = ascii.split('.');
  if (ascii.length > 253) throw invalid(typed, 'it is longer than 253 characters');
  const bad = labels.find((l) => !LABEL.test(l));
  if (bad !== undefined) throw invalid(typed, `the label ${JSON.stringify(bad)} is not 1 to 63 letters, digits or hyphens (not at either end)`);
  if (/^\d+$/.test(labels.at(-1) ?? '')) throw invalid(typed, 'its last label is a number');
  if (labels.length < 2) throw invalid(typed, 'it is a top-level domain alone');
  if (!parsed.isIcann && !parsed.isPrivate) throw invalid(typed, `.${parsed.publicSuffix ?? labels.at(-1)} is not a public top-level domain (the public suffix list does not know it)`);
  if (parsed.domain === null) throw invalid(typed, `${ascii} is a public suffix, under which others register their domains; add a domain registered under it`);
  if (ascii === ownDomain || ascii.endsWith(`.${ownDomain}`)) throw invalid(typed, `${ownDomain} is the platform's own mail domain`);
  return ascii;
}
