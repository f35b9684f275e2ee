/**
 * The MCP server of one caller: lists the tools (tools.ts, with input schemas from the API's
 * operations) and runs a call through @mailroom/sdk, acting with that caller's API key. Every
 * failure comes back as a tool result with isError and {error: {code, message, fix, ...}}.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { OPERATIONS, type Mailroom, type OperationInfo } from '@mailroom/sdk';
import { CUSTOM_TOOLS } from './attachment-tools';
import { fileContent } from './domain/file-content';
import { toToolError } from './domain/tool-error';
import { InvalidArguments, splitArguments, toolInputSchema } from './domain/tool-input';
import { TOOLS, type ToolDefinition } from './tools';

export const SERVER_NAME = 'mailroom';
export const SERVER_VERSION = '0.1.0';

const INSTRUCTIONS = [
  'Mailroom: email for agents. Typical loop: list_inboxes (or create_inbox), list_messages, get_message (read extracted_text), then reply_to_message.',
  'Sends (send_message, reply_to_message, reply_all_to_message, forward_message) cannot be recalled: pass an idempotency_key, and reuse it when retrying the same send.',
  'A failed call answers {"error": {"code", "message", "fix"}}: follow the fix.',
].join(' ');

interface ResolvedTool {
  definition: ToolDefinition;
  operation: OperationInfo;
  listing: Tool;
}

/** The catalog joined to the operations it names; a tool naming no operation fails at start-up (and in the unit tests). */
export function resolveTools(operations: readonly OperationInfo[] = OPERATIONS): ResolvedTool[] {
  return TOOLS.map((definition) => {
    const operation = operations.find((op) => op.id === definition.operation);
    if (!operation) throw new Error(`tool ${definition.name}: the API has no operation ${definition.operation}`);
    const listing: Tool = {
      name: definition.name,
      title: operation.summary || definition.name,
      description: definition.description,
      inputSchema: CUSTOM_TOOLS[definition.name]?.input?.() ?? toolInputSchema(operation),
      annotations: {
        readOnlyHint: definition.readOnly ?? false,
        destructiveHint: definition.destructive ?? false,
        idempotentHint: definition.readOnly ?? definition.idempotent ?? false,
        openWorldHint: operation.id.startsWith('mailbox.message.') && !definition.readOnly,
      },
    };
    return { definition, operation, listing };
  });
}

const errorResult = (err: unknown): CallToolResult => ({
  isError: true,
  content: [{ type: 'text', text: JSON.stringify({ error: toToolError(err) }, null, 2) }],
});

const NO_PARTS = { path: {}, query: {}, body: undefined, headers: {} };

async function runTool(mr: Mailroom, tool: ResolvedTool, args: Record<string, unknown>): Promise<CallToolResult> {
  const custom = CUSTOM_TOOLS[tool.definition.name];
  // A tool with an input of its own checks its arguments itself.
  if (custom?.input) return custom.run(mr, args, NO_PARTS);
  const parts = splitArguments(tool.operation, args);
  if (custom) return custom.run(mr, args, parts);
  const { path, query, body, headers } = parts;
  const file = tool.definition.output === 'file';
  const { data, response } = await mr.call(tool.operation.id, {
    path,
    query,
    ...(body !== undefined ? { body } : {}),
    headers,
    ...(file ? { parseAs: 'arrayBuffer' as const } : {}),
  });
  if (file) {
    const uri = `mailroom:${new URL(response.url).pathname}`;
    return { content: fileContent(new Uint8Array(data as ArrayBuffer), response.headers.get('content-type'), uri) };
  }
  if (response.status === 204 || data === undefined || data === '') return { content: [{ type: 'text', text: JSON.stringify({ ok: true, status: response.status }) }] };
  return { content: [{ type: 'text', text: JSON.stringify(data, null, 2) }] };
}

export function createMcpServer(mr: Mailroom): Server {
  const tools = resolveTools();
  const byName = new Map(tools.map((t) => [t.definition.name, t]));
  const server = new Server({ name: SERVER_NAME, version: SERVER_VERSION }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools.map((t) => t.listing) }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = byName.get(request.params.name);
    if (!tool) return errorResult({ code: 'unknown_tool', message: `no tool named ${request.params.name}` });
    try {
      return await runTool(mr, tool, request.params.arguments ?? {});
    } catch (err) {
      return errorResult(err instanceof InvalidArguments ? { code: err.code, message: err.message } : err);
    }
  });
  return server;
}
