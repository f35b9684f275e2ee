/**
 * An OTLP/HTTP collector on loopback for the export tests: it keeps what each request sent
 * and answers 200. The SDK's exporters load modules jest's VM refuses, so `script` runs in a
 * real Node process (from the build), given the collector's URL as `process.argv[1]`.
 */
import { execFile } from 'node:child_process';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

export interface Received {
  url: string;
  body: string;
}

/** Runs `script` against a fresh collector and answers every request it received; the script must exit 0. */
export async function exportToCollector(script: string): Promise<Received[]> {
  const received: Received[] = [];
  const collector = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ url: req.url ?? '', body });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => collector.listen(0, '127.0.0.1', r));
  const { port } = collector.address() as AddressInfo;
  try {
    await new Promise<void>((resolve, reject) =>
      execFile(process.execPath, ['-e', script, `http://127.0.0.1:${port}`], { cwd: path.resolve(__dirname, '..') }, (err) => (err ? reject(err) : resolve())),
    );
    return received;
  } finally {
    collector.close();
  }
}
