#!/usr/bin/env node
/**
 * mailroom-mcp: Mailroom's tools for MCP clients. Over stdio (the default: the client starts it,
 * MAILROOM_API_KEY in its environment) or Streamable HTTP (`--http`: POST /mcp, the API key as
 * each request's bearer token). Nothing but the protocol goes to stdout; notes go to stderr.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { Mailroom } from '@mailroom/sdk';
import { loadConfig } from './config';
import { listenHttp } from './http';
import { createMcpServer } from './server';

const note = (text: string) => process.stderr.write(`mailroom-mcp: ${text}\n`);

export async function main(env: Record<string, string | undefined> = process.env, argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  const config = loadConfig(env, argv);
  if (config.MAILROOM_MCP_TRANSPORT === 'stdio') {
    const server = createMcpServer(new Mailroom({ apiKey: config.MAILROOM_API_KEY, baseUrl: config.MAILROOM_BASE_URL, env: {} }));
    await server.connect(new StdioServerTransport());
    return;
  }
  const { server, url } = await listenHttp({
    host: config.MAILROOM_MCP_HOST,
    port: config.MAILROOM_MCP_PORT,
    baseUrl: config.MAILROOM_BASE_URL,
    onError: (err) => note(`request failed: ${err instanceof Error ? err.message : String(err)}`),
  });
  note(`listening on ${url} (Streamable HTTP), API at ${config.MAILROOM_BASE_URL}`);
  const stop = () => server.close(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    note(err instanceof Error ? err.message : String(err));
    process.exit(1);
  });
}
