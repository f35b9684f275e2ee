/** The tool catalog against the API's operations: what tools/list answers, checked without a server. */
import Ajv2020 from 'ajv/dist/2020';
import { OPERATIONS } from '@mailroom/sdk';
import { resolveTools } from './server';
import { CUSTOM_TOOLS } from './attachment-tools';
import { TOOLS } from './tools';

describe('the tools', () => {
  const tools = resolveTools();

  it('each name an operation of the API, under a name every MCP client accepts', () => {
    expect(tools).toHaveLength(TOOLS.length);
    for (const { listing } of tools) expect(listing.name).toMatch(/^[a-z][a-z0-9_]{0,63}$/);
    expect(new Set(tools.map((t) => t.listing.name)).size).toBe(tools.length);
    expect(() => resolveTools(OPERATIONS.filter((op) => op.id !== 'mailbox.message.reply'))).toThrow('reply_to_message: the API has no operation mailbox.message.reply');
  });

  it('take input schemas that are valid JSON Schema (2020-12), objects at the top, without references', () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    for (const { listing } of tools) {
      expect(() => ajv.compile(listing.inputSchema)).not.toThrow();
      expect(listing.inputSchema.type).toBe('object');
      expect(JSON.stringify(listing.inputSchema)).not.toContain('$ref');
    }
  });

  it('say that a send cannot be recalled, and offer an idempotency key', () => {
    for (const name of ['send_message', 'reply_to_message', 'reply_all_to_message', 'forward_message']) {
      const tool = tools.find((t) => t.listing.name === name)!;
      expect(tool.listing.description).toContain('cannot be recalled');
      expect(tool.listing.inputSchema.properties).toHaveProperty('idempotency_key');
      expect(tool.listing.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    }
  });

  it('cover the agent loop and its management', () => {
    expect(tools.map((t) => t.listing.name)).toEqual(
      expect.arrayContaining(['list_inboxes', 'create_inbox', 'list_messages', 'get_message', 'get_raw_message', 'list_threads', 'get_thread', 'send_message', 'reply_to_message', 'get_attachment', 'upload_attachment', 'add_message_labels', 'list_suppressions', 'create_webhook_endpoint', 'list_webhook_deliveries', 'get_usage']),
    );
  });

  it('run their own way only where the catalog has them, and say how to send attachments', () => {
    for (const name of Object.keys(CUSTOM_TOOLS)) expect(TOOLS.map((t) => t.name)).toContain(name);
    const upload = tools.find((t) => t.listing.name === 'upload_attachment')!;
    expect(upload.listing.inputSchema.required).toEqual(['filename']);
    for (const name of ['send_message', 'reply_to_message', 'reply_all_to_message', 'forward_message']) {
      const tool = tools.find((t) => t.listing.name === name)!;
      expect(tool.listing.description).toMatch(/\{url\}.*\{attachment_id\}.*upload_attachment/);
      // The attachment shapes are the API's own: inline, by upload id, by URL.
      const items = (tool.listing.inputSchema.properties!.attachments as { items: { anyOf: { required: string[] }[] } }).items.anyOf.map((s) => s.required);
      expect(items).toEqual([['filename', 'content_base64'], ['attachment_id'], ['url']]);
    }
  });
});
