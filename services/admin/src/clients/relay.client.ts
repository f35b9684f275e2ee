/**
 * Whether the send relay takes connections: a TCP (smtps: TLS) connection to the host and
 * port of SMTP_RELAY_URL, its greeting read (a 220 line), then QUIT. Nothing is sent and no
 * credential of the URL is used.
 */
import net from 'node:net';
import tls from 'node:tls';
import type { Reachability } from '../domain/ports';

export interface RelayTarget {
  host: string;
  port: number;
  secure: boolean;
}

export function relayTarget(url: string): RelayTarget {
  const u = new URL(url);
  const secure = u.protocol === 'smtps:';
  return { host: u.hostname.replace(/^\[|\]$/g, ''), port: u.port ? Number(u.port) : secure ? 465 : 25, secure };
}

export class RelayClient {
  constructor(
    private readonly target: RelayTarget,
    // Within health's bound on a probe (3 s), so the answer says where it failed.
    private readonly timeoutMs = 2_500,
  ) {}

  check(): Promise<Reachability & { host: string; port: number }> {
    const { host, port, secure } = this.target;
    return new Promise((resolve) => {
      const socket = secure ? tls.connect({ host, port, servername: net.isIP(host) ? undefined : host }) : net.connect({ host, port });
      let greeting = '';
      const done = (error: string | null) => {
        socket.removeAllListeners('data');
        if (error === null) socket.end('QUIT\r\n');
        socket.destroy();
        resolve({ reachable: error === null, error, host, port });
      };
      socket.setTimeout(this.timeoutMs, () => done(`no greeting within ${this.timeoutMs} ms`));
      socket.on('error', (err) => done(err.message));
      socket.on('data', (chunk: Buffer) => {
        greeting += chunk.toString('latin1');
        // Whole lines only; a greeting may span several (220-...), the last is "220 ...".
        for (const line of greeting.split('\n').slice(0, -1)) {
          if (!line.startsWith('220')) return done(`the relay answered ${line.trim().slice(0, 120)}`);
          if (line.startsWith('220 ')) return done(null);
        }
      });
    });
  }
}
