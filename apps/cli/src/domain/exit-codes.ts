/**
 * The CLI's exit codes, by error class, so a script can tell "fix the command" from "log in
 * again" from "try later" without parsing messages. Documented in the README.
 */
export const EXIT = {
  ok: 0,
  /** A bad command line (unknown command or option, missing argument), or an unexpected failure. */
  usage: 1,
  /** 401/403: no key, a revoked key, or a key without the permission. */
  auth: 2,
  /** 404: the id does not exist in this environment. */
  notFound: 3,
  /** 400/409/413/422: the API refused the input. */
  validation: 4,
  /** 429 or 5xx: try again later. */
  unavailable: 5,
  /** No answer at all (connection refused, DNS, timeout). */
  network: 6,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The exit code of an API failure, from its HTTP status (0: no answer came). */
export function exitCodeForStatus(status: number): ExitCode {
  if (status === 0) return EXIT.network;
  if (status === 401 || status === 403) return EXIT.auth;
  if (status === 404 || status === 410) return EXIT.notFound;
  if (status === 429 || status >= 500) return EXIT.unavailable;
  if (status >= 400) return EXIT.validation;
  return EXIT.usage;
}
