/** The MCP server's settings: the environment, and the command line over it. */
import { z } from 'zod';

const schema = z.object({
  MAILROOM_BASE_URL: z.url().default('http://localhost:8080'),
  /** The API key the stdio server acts with (over HTTP, each request's Authorization header). */
  MAILROOM_API_KEY: z.string().min(1).optional(),
  MAILROOM_MCP_TRANSPORT: z.enum(['stdio', 'http']).default('stdio'),
  /** Where the HTTP server listens: loopback unless told otherwise. */
  MAILROOM_MCP_HOST: z.string().min(1).default('127.0.0.1'),
  MAILROOM_MCP_PORT: z.coerce.number().int().min(0).max(65535).default(8090),
});

export type McpConfig = z.infer<typeof schema>;

/** `--http`, `--stdio`, `--port N`, `--host H` override the environment. */
export function loadConfig(env: Record<string, string | undefined>, argv: readonly string[]): McpConfig {
  const merged: Record<string, string | undefined> = { ...env };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--http' || arg === '--stdio') merged.MAILROOM_MCP_TRANSPORT = arg.slice(2);
    else if (arg === '--port') merged.MAILROOM_MCP_PORT = argv[++i];
    else if (arg === '--host') merged.MAILROOM_MCP_HOST = argv[++i];
    else throw new Error(`unknown argument ${arg} (usage: mailroom-mcp [--stdio | --http [--host H] [--port N]])`);
  }
  const parsed = schema.safeParse(merged);
  if (!parsed.success) throw new Error(`mailroom-mcp: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  if (parsed.data.MAILROOM_MCP_TRANSPORT === 'stdio' && !parsed.data.MAILROOM_API_KEY) throw new Error('mailroom-mcp: MAILROOM_API_KEY is required (an API key, mr_...)');
  return parsed.data;
}
