/**
 * The MCP server's tools: the agent loop (read, send, reply) and its management, each one API
 * operation of the route table, named by its operation id. What a tool takes is the operation's
 * input (domain/tool-input.ts); what is said here is what a model needs to choose it, above
 * all what cannot be undone.
 */

/** How a tool answers: the API's JSON, or a stored file (a raw message, an attachment). */
export type ToolOutput = 'json' | 'file';

export interface ToolDefinition {
  name: string;
  /** The API operation (its OpenAPI operation id). */
  operation: string;
  description: string;
  output?: ToolOutput;
  /** MCP annotations: hints for clients that ask before running what writes or destroys. */
  readOnly?: boolean;
  destructive?: boolean;
  idempotent?: boolean;
}

const SENDS =
  'Irreversible: the mail leaves at once and cannot be recalled. Calling this again sends again, unless you pass the same idempotency_key (then the first answer comes back and nothing is sent).';
const ATTACHMENTS =
  'Each attachment is one of: {url} (an http(s) file the server fetches when sending; optional filename, content_type), {attachment_id} (from upload_attachment, for 24 hours), or {filename, content_base64} (small files, 512 KiB in all).';
const PAGED = 'Paged: at most `limit` items (default 20, at most 100); pass the answer\'s next_page_token as page_token for the next page (null: no more).';

export const TOOLS: readonly ToolDefinition[] = [
  // Inboxes
  { name: 'list_inboxes', operation: 'mailbox.inbox.list', readOnly: true, description: `List the inboxes (addresses) of this environment. ${PAGED}` },
  { name: 'get_inbox', operation: 'mailbox.inbox.get', readOnly: true, description: 'Get one inbox by its id (inb_...).' },
  { name: 'create_inbox', operation: 'mailbox.inbox.create', description: 'Create an inbox: a new email address that receives mail and can send. Without username, a random one is chosen.' },
  { name: 'update_inbox', operation: 'mailbox.inbox.update', idempotent: true, description: "Change an inbox's display name or settings." },
  { name: 'delete_inbox', operation: 'mailbox.inbox.delete', destructive: true, description: 'Delete an inbox. Irreversible: its address stops receiving mail and its messages can no longer be read through it.' },
  { name: 'resume_inbox', operation: 'mailbox.inbox.resume', idempotent: true, description: 'Resume a paused inbox, so it sends again.' },
  // Messages and threads
  { name: 'list_messages', operation: 'mailbox.message.list', readOnly: true, description: `List the messages of an inbox, newest first; filter by label, before and after (ISO 8601 times). ${PAGED}` },
  {
    name: 'get_message',
    operation: 'mailbox.message.get',
    readOnly: true,
    description: 'Get a message: headers, text_body and html_body as received, and extracted_text (the new text without quoted history or signature: what to read), attachments (ids, and download_url: signed links that need no API key until download_urls_expire_at), labels.',
  },
  { name: 'get_raw_message', operation: 'mailbox.message.raw', readOnly: true, output: 'file', description: 'Get a message as received: the whole RFC 5322 source (headers and MIME parts), as text up to 256 KiB; a larger source is answered with a signed download link instead.' },
  { name: 'list_threads', operation: 'mailbox.thread.list', readOnly: true, description: `List the conversations (threads) of an inbox, latest activity first. ${PAGED}` },
  { name: 'get_thread', operation: 'mailbox.thread.get', readOnly: true, description: 'Get a thread with its messages, in order.' },
  { name: 'send_message', operation: 'mailbox.message.send', description: `Send a new email from an inbox (to, cc, bcc, subject, text_body and/or html_body, attachments). ${ATTACHMENTS} ${SENDS}` },
  { name: 'reply_to_message', operation: 'mailbox.message.reply', description: `Reply to the sender of a message, in its thread (subject "Re: ...", threading headers set). ${ATTACHMENTS} ${SENDS}` },
  { name: 'reply_all_to_message', operation: 'mailbox.message.replyAll', description: `Reply to the sender and every other recipient of a message, in its thread. ${ATTACHMENTS} ${SENDS}` },
  { name: 'forward_message', operation: 'mailbox.message.forward', description: `Forward a message, with its attachments, to other addresses; attachments adds files to them. ${ATTACHMENTS} ${SENDS}` },
  // Labels
  { name: 'list_labels', operation: 'mailbox.label.list', readOnly: true, description: 'List the labels in use, with their counts.' },
  { name: 'add_message_labels', operation: 'mailbox.label.addToMessage', idempotent: true, description: 'Add labels to a message (a label already there stays once).' },
  { name: 'remove_message_labels', operation: 'mailbox.label.removeFromMessage', idempotent: true, description: 'Remove labels from a message.' },
  { name: 'add_thread_labels', operation: 'mailbox.label.addToThread', idempotent: true, description: 'Add labels to every message of a thread.' },
  { name: 'remove_thread_labels', operation: 'mailbox.label.removeFromThread', idempotent: true, description: 'Remove labels from every message of a thread.' },
  // Attachments
  {
    name: 'get_attachment',
    operation: 'mailbox.attachment.get',
    readOnly: true,
    description:
      'Get an attachment of a message (its id from get_message): its text when it is text (text/*, JSON, XML, CSV; up to 256 KiB), else {download_url, expires_at, filename, content_type, size}: a signed link whose plain GET returns the bytes, no API key needed, until expires_at.',
  },
  {
    name: 'upload_attachment',
    operation: 'mailbox.upload.register',
    description:
      'Upload a file to attach to later sends (up to 25 MB): filename, and content_text (text) or content_base64 (binary). Answers attachment_id: pass {attachment_id} in the attachments of send_message, reply_to_message, reply_all_to_message or forward_message, within 24 hours. Sends nothing by itself.',
  },
  // Suppressions
  { name: 'list_suppressions', operation: 'mail-send.suppression.list', readOnly: true, description: `List the addresses mail is not sent to (bounced, complained, unsubscribed, or added by hand). ${PAGED}` },
  { name: 'add_suppression', operation: 'mail-send.suppression.add', idempotent: true, description: 'Stop sending to an address: every later send to it is refused (blocked_recipient).' },
  { name: 'delete_suppression', operation: 'mail-send.suppression.delete', destructive: true, description: 'Allow sending to a suppressed address again. Only when you are sure the person wants mail: a complaint or hard bounce put it there.' },
  // Webhooks
  { name: 'list_webhook_endpoints', operation: 'webhooks.endpoint.list', readOnly: true, description: `List the webhook endpoints that receive events. ${PAGED}` },
  {
    name: 'create_webhook_endpoint',
    operation: 'webhooks.endpoint.create',
    description: 'Create a webhook endpoint: Mailroom POSTs the chosen events (message.received, message.sent, ...) to url, signed. The answer holds the signing secret, shown this once: keep it.',
  },
  { name: 'delete_webhook_endpoint', operation: 'webhooks.endpoint.delete', destructive: true, description: 'Delete a webhook endpoint. Irreversible: its events stop at once, queued deliveries are dropped.' },
  { name: 'list_webhook_deliveries', operation: 'webhooks.delivery.list', readOnly: true, description: `List the delivery attempts of a webhook endpoint, with status and http_status. ${PAGED}` },
  // Organization
  { name: 'get_usage', operation: 'orgs.organization.usage', readOnly: true, description: "The organization's usage against its plan's limits (messages sent, inboxes, ...)." },
];
