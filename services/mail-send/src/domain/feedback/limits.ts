// A report is small: a notice, status fields and at most a copy of the original message, which
// MTAs truncate or cut to its headers (RFC 3462 recommends headers only). Input over 5 MB is a
// returned large message or not a report; reading it would spend memory and CPU on bytes anyone
// can send us, so it is `other`. The other limits keep each step linear and small.
export const MAX_REPORT_BYTES = 5 * 1024 * 1024;
export const MAX_PARTS = 200;
export const MAX_HEADER_BYTES = 256 * 1024;
export const MAX_TEXT_CHARS = 200_000; // notice text read by the plain-text rules
export const MAX_HTML_CHARS = 100_000; // an HTML part made text (real notices: 60 KB at most)
export const MAX_LINE_CHARS = 2_000; // longer lines are cut before any pattern sees them
export const MAX_DIAGNOSTIC_CHARS = 1_000;
export const MAX_RECIPIENTS = 500;
