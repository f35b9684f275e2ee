import type { OperationInfo } from '@mailroom/sdk';
import { InvalidArguments, splitArguments, toolInputSchema } from './tool-input';

const reply: OperationInfo = {
  id: 'mailbox.message.reply',
  method: 'POST',
  url: '/api/v1/inboxes/{inbox_id}/messages/{message_id}/reply',
  summary: 'Reply',
  tag: 'messages',
  idempotencyKey: true,
  parameters: [
    { name: 'inbox_id', in: 'path', required: true, schema: { type: 'string' } },
    { name: 'message_id', in: 'path', required: true, schema: { type: 'string' } },
  ],
  body: { contentType: 'application/json', schema: { type: 'object', properties: { text_body: { type: 'string' }, html_body: { type: 'string' } }, required: ['text_body'], additionalProperties: false } },
};
const list: OperationInfo = {
  ...reply,
  id: 'mailbox.message.list',
  method: 'GET',
  idempotencyKey: false,
  parameters: [reply.parameters[0]!, { name: 'limit', in: 'query', required: false, schema: { type: 'number' } }],
  body: null,
};

describe('a tool input from an operation', () => {
  it('is one flat object: path and query parameters, body fields, and idempotency_key where the operation takes one', () => {
    const schema = toolInputSchema(reply);
    expect(schema).toMatchObject({ type: 'object', additionalProperties: false, required: ['inbox_id', 'message_id', 'text_body'] });
    expect(Object.keys(schema.properties)).toEqual(['inbox_id', 'message_id', 'text_body', 'html_body', 'idempotency_key']);
    expect(Object.keys(toolInputSchema(list).properties)).toEqual(['inbox_id', 'limit']);
  });

  it('refuses an operation whose parameter and body field share a name', () => {
    const clash = { ...reply, body: { contentType: 'application/json', schema: { type: 'object', properties: { inbox_id: { type: 'string' } } } } };
    expect(() => toolInputSchema(clash)).toThrow('inbox_id is both a parameter and a body field');
  });

  it('splits the arguments back into path, query, body and the Idempotency-Key header', () => {
    expect(splitArguments(reply, { inbox_id: 'inb_1', message_id: 'msg_1', text_body: 'hi', idempotency_key: 'k1' })).toEqual({
      path: { inbox_id: 'inb_1', message_id: 'msg_1' },
      query: {},
      body: { text_body: 'hi' },
      headers: { 'Idempotency-Key': 'k1' },
    });
    expect(splitArguments(list, { inbox_id: 'inb_1', limit: 5 })).toEqual({ path: { inbox_id: 'inb_1' }, query: { limit: 5 }, body: undefined, headers: {} });
    expect(splitArguments(reply, { inbox_id: 'i', message_id: 'm' }).body).toEqual({});
  });

  it('refuses unknown arguments and missing path parameters, naming them', () => {
    expect(() => splitArguments(list, { inbox_id: 'i', idempotency_key: 'k', colour: 'red' })).toThrow(new InvalidArguments('unknown arguments: idempotency_key, colour'));
    expect(() => splitArguments(reply, { text_body: 'x' })).toThrow('missing required arguments: inbox_id, message_id');
  });
});
