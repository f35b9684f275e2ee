/** The lines `npm start` prints once the API answers: where everything is and what to try. */
import { waitUntil } from './net';

/** Whether GET /api/v1/openapi.json answers 200 before the platform exits (false: it exited). */
export function waitForApi(port: number, exited: Promise<number>): Promise<boolean> {
  const answers = async () => {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/openapi.json`, { signal: AbortSignal.timeout(1_000) });
    await res.body?.cancel();
    return res.ok;
  };
  return waitUntil('the API', answers, { timeoutMs: Number.POSITIVE_INFINITY, exited }).then(
    () => true,
    () => false,
  );
}

export interface BannerFacts {
  port: number;
  smtpPort: number;
  mailDomain: string;
  dataDir: string;
  servers: string[];
  /** From the command to the API answering, when the start script measured it. */
  seconds: number | undefined;
}

export function banner(f: BannerFacts): string {
  const api = `http://localhost:${f.port}/api/v1`;
  const signup = `curl -s ${api}/auth/signup -H 'content-type: application/json' -d '{"email":"you@example.com","password":"correct horse battery","name":"You"}'`;
  return [
    '',
    `  Mailroom is running${f.seconds === undefined ? '' : ` (ready in ${f.seconds.toFixed(1)} s)`}`,
    '',
    `  API       ${api}`,
    `  OpenAPI   ${api}/openapi.json`,
    `  SMTP      localhost:${f.smtpPort}, for <inbox>@${f.mailDomain}`,
    `  Data      ${f.dataDir} (to reset: stop, then delete it)`,
    ...f.servers.map((line, i) => `  ${i === 0 ? 'Servers' : '       '}   ${line}`),
    '',
    `  Try       ${signup}`,
    '            then follow the README ("Try it") for an API key, an inbox and a first mail.',
    '  Stop      Ctrl-C',
    '',
    '',
  ].join('\n');
}
