/**
 * A compact JWS as we accept it: three segments of canonical base64url (no padding, no
 * whitespace, no other characters, zero trailing bits), so one token has exactly one
 * spelling. jose decodes leniently; this check runs before it.
 */
const SEGMENT = /^[A-Za-z0-9_-]*$/;

function canonicalSegment(segment: string): boolean {
  if (!SEGMENT.test(segment) || segment.length % 4 === 1) return false;
  return Buffer.from(segment, 'base64url').toString('base64url') === segment;
}

export function isCanonicalCompactJws(token: string): boolean {
  const parts = token.split('.');
  return parts.length === 3 && parts[0] !== '' && parts[2] !== '' && parts.every(canonicalSegment);
}
