/** Whether something answers on a loopback port, and waiting for a server to be ready. */
import { connect } from 'node:net';

export function portAnswers(port: number, host = '127.0.0.1', timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export class NotReady extends Error {}

/**
 * Polls `ready` until it says yes; fails when `exited` settles first (the server died: its
 * log says why) or after `timeoutMs`.
 */
export async function waitUntil(what: string, ready: () => Promise<boolean>, opts: { timeoutMs: number; exited?: Promise<number> }): Promise<void> {
  let exitCode: number | undefined;
  void opts.exited?.then((code) => (exitCode = code));
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    if (await ready().catch(() => false)) return;
    if (exitCode !== undefined) throw new NotReady(`${what} exited (code ${exitCode}) before it was ready`);
    if (Date.now() > deadline) throw new NotReady(`${what} was not ready after ${Math.round(opts.timeoutMs / 1000)} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
