/**
 * Streamable HTTP at /mcp, stateless: each POST is one JSON-RPC exchange served by a server of
 * its own, acting with the API key of its Authorization header (nothing is kept between
 * requests, so any instance can answer any request).
 */
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Mailroom } from '@mailroom/sdk';
import { createMcpServer } from './server';

function rpcError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

async function handle(req: IncomingMessage, res: ServerResponse, baseUrl: string): Promise<void> {
  if (new URL(req.url ?? '/', 'http://localhost').pathname !== '/mcp') return rpcError(res, 404, 'not found: the MCP endpoint is /mcp');
  // Stateless: no session to stream to (GET) or end (DELETE).
  if (req.method !== 'POST') return rpcError(res, 405, 'method not allowed: POST JSON-RPC to /mcp', { allow: 'POST' });
  const apiKey = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
  if (!apiKey) return rpcError(res, 401, 'unauthorized: send Authorization: Bearer <a Mailroom API key>', { 'www-authenticate': 'Bearer' });
  const server = createMcpServer(new Mailroom({ apiKey, baseUrl, env: {} }));
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res);
}

export async function listenHttp(opts: { host: string; port: number; baseUrl: string; onError: (err: unknown) => void }): Promise<{ server: HttpServer; url: string }> {
  const server = createServer((req, res) => {
    handle(req, res, opts.baseUrl).catch((err: unknown) => {
      opts.onError(err);
      if (!res.headersSent) rpcError(res, 500, 'internal error');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  return { server, url: `http://${address.includes(':') ? `[${address}]` : address}:${port}/mcp` };
}
