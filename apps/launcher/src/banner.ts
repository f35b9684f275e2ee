/** The lines `npm start` prints once the API answers: where everything is and what to try. */

/** Whether GET /api/v1/openapi.json answers 200 before the platform exits (false: it exited). */
export async function waitForApi(port: number, exited: Promise<number>): Promise<boolean> {
  let gone = false;
  void exited.then(() => (gone = true));
  while (!gone) {
    const ok = await fetch(`http://127.0.0.1:${port}/api/v1/openapi.json`, { signal: AbortSignal.timeout(1_000) }).then(
      async (res) => {
        await res.body?.cancel();
        return res.ok;
      },
      () => false,
    );
    if (ok) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
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
