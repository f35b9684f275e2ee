/** The API's resources as commands: inboxes, messages, threads, send, reply, webhooks, keys. */
import { Command, Option } from 'commander';
import { client, collect, parseLimit, printDone, printList, printRecord } from './context';

const limitOption = () => new Option('--limit <n>', 'at most this many items, or "all"').default(20).argParser(parseLimit);
const pageQuery = (token: string | undefined, size: number) => ({ limit: size, ...(token ? { page_token: token } : {}) });
const EVENTS = ['message.received', 'message.sent', 'message.delivered', 'message.bounced', 'message.complained', 'message.rejected', 'domain.verified'];

export function inboxesCommand(): Command {
  const inboxes = new Command('inboxes').description('list, create, get and delete inboxes');
  inboxes
    .command('list')
    .description('list the inboxes, newest first')
    .addOption(limitOption())
    .action(async (o: { limit: number }, cmd: Command) => {
      const mr = client();
      const items = await collect(mr, o.limit, (t, size) => mr.mailbox.inbox.list({ query: pageQuery(t, size) }));
      printList(cmd, items, ['inbox_id', 'address', 'display_name', 'status', 'created_at']);
    });
  inboxes
    .command('create')
    .description('create an inbox (a random username when none is given)')
    .option('--username <name>')
    .option('--domain <domain>')
    .option('--display-name <name>')
    .action(async (o: { username?: string; domain?: string; displayName?: string }, cmd: Command) => {
      const body = { ...(o.username ? { username: o.username } : {}), ...(o.domain ? { domain: o.domain } : {}), ...(o.displayName ? { display_name: o.displayName } : {}) };
      printRecord(cmd, (await client().mailbox.inbox.create({ body })).data);
    });
  inboxes
    .command('get <inbox_id>')
    .description('show an inbox')
    .action(async (id: string, _o: unknown, cmd: Command) => printRecord(cmd, (await client().mailbox.inbox.get({ path: { id } })).data));
  inboxes
    .command('delete <inbox_id>')
    .description('delete an inbox (irreversible: mail to it is refused from then on)')
    .action(async (id: string, _o: unknown, cmd: Command) => {
      await client().mailbox.inbox.delete({ path: { id } });
      printDone(cmd, `deleted ${id}`, { inbox_id: id });
    });
  return inboxes;
}

export function messagesCommand(): Command {
  const messages = new Command('messages').description('list and read the messages of an inbox');
  messages
    .command('list <inbox_id>')
    .description('list messages, newest first')
    .option('--label <label>', 'only messages with this label')
    .option('--before <time>', 'only messages before this ISO 8601 time')
    .option('--after <time>', 'only messages after this ISO 8601 time')
    .addOption(limitOption())
    .action(async (inbox_id: string, o: { label?: string; before?: string; after?: string; limit: number }, cmd: Command) => {
      const mr = client();
      const filters = { ...(o.label ? { label: o.label } : {}), ...(o.before ? { before: o.before } : {}), ...(o.after ? { after: o.after } : {}) };
      const items = await collect(mr, o.limit, (t, size) => mr.mailbox.message.list({ path: { inbox_id }, query: { ...filters, ...pageQuery(t, size) } }));
      printList(cmd, items, ['message_id', 'from_address', 'subject', 'labels', 'received_at']);
    });
  messages
    .command('get <inbox_id> <message_id>')
    .description('show a message, with its extracted_text (the new text, without quoted history)')
    .action(async (inbox_id: string, message_id: string, _o: unknown, cmd: Command) => {
      const { data } = await client().mailbox.message.get({ path: { inbox_id, message_id } });
      printRecord(cmd, data, ['extracted_text']);
    });
  return messages;
}

export function threadsCommand(): Command {
  const threads = new Command('threads').description('list and read the conversations of an inbox');
  threads
    .command('list <inbox_id>')
    .description('list threads, latest activity first')
    .option('--label <label>', 'only threads with this label')
    .addOption(limitOption())
    .action(async (inbox_id: string, o: { label?: string; limit: number }, cmd: Command) => {
      const mr = client();
      const items = await collect(mr, o.limit, (t, size) => mr.mailbox.thread.list({ path: { inbox_id }, query: { ...(o.label ? { label: o.label } : {}), ...pageQuery(t, size) } }));
      printList(cmd, items, ['thread_id', 'subject', 'message_count', 'last_message_at']);
    });
  threads
    .command('get <inbox_id> <thread_id>')
    .description('show a thread with its messages')
    .action(async (inbox_id: string, thread_id: string, _o: unknown, cmd: Command) => printRecord(cmd, (await client().mailbox.thread.get({ path: { inbox_id, thread_id } })).data));
  return threads;
}

const idempotencyOption = () => new Option('--idempotency-key <key>', 'the same key again answers the first send instead of sending twice');
const keyHeader = (key: string | undefined) => (key ? { headers: { 'Idempotency-Key': key } } : {});

export function sendCommand(): Command {
  return new Command('send')
    .description('send a new message from an inbox (irreversible)')
    .argument('<inbox_id>')
    .requiredOption('--to <address...>', 'recipients')
    .option('--cc <address...>')
    .option('--bcc <address...>')
    .requiredOption('--subject <subject>')
    .option('--text <body>', 'the plain text body')
    .option('--html <body>', 'the HTML body')
    .addOption(idempotencyOption())
    .action(async (inbox_id: string, o: { to: string[]; cc?: string[]; bcc?: string[]; subject: string; text?: string; html?: string; idempotencyKey?: string }, cmd: Command) => {
      const body = {
        to: o.to,
        subject: o.subject,
        ...(o.cc ? { cc: o.cc } : {}),
        ...(o.bcc ? { bcc: o.bcc } : {}),
        ...(o.text !== undefined ? { text_body: o.text } : {}),
        ...(o.html !== undefined ? { html_body: o.html } : {}),
      };
      printRecord(cmd, (await client().mailbox.message.send({ path: { inbox_id }, body, ...keyHeader(o.idempotencyKey) })).data);
    });
}

export function replyCommand(): Command {
  return new Command('reply')
    .description('reply to a message, in its thread (irreversible)')
    .argument('<inbox_id>')
    .argument('<message_id>')
    .option('--text <body>', 'the plain text body')
    .option('--html <body>', 'the HTML body')
    .option('--all', 'reply to every recipient, not just the sender')
    .addOption(idempotencyOption())
    .action(async (inbox_id: string, message_id: string, o: { text?: string; html?: string; all?: boolean; idempotencyKey?: string }, cmd: Command) => {
      const mr = client();
      const request = { path: { inbox_id, message_id }, body: { ...(o.text !== undefined ? { text_body: o.text } : {}), ...(o.html !== undefined ? { html_body: o.html } : {}) } as { text_body: string }, ...keyHeader(o.idempotencyKey) };
      const { data } = o.all ? await mr.mailbox.message.replyAll(request) : await mr.mailbox.message.reply(request);
      printRecord(cmd, data);
    });
}

export function webhooksCommand(): Command {
  const webhooks = new Command('webhooks').description('webhook endpoints and their deliveries');
  webhooks
    .command('list')
    .description('list the webhook endpoints')
    .addOption(limitOption())
    .action(async (o: { limit: number }, cmd: Command) => {
      const mr = client();
      const items = await collect(mr, o.limit, (t, size) => mr.webhooks.endpoint.list({ query: pageQuery(t, size) }));
      printList(cmd, items, ['id', 'url', 'events', 'disabled', 'created_at']);
    });
  webhooks
    .command('create')
    .description('create an endpoint; its signing secret is shown this once')
    .requiredOption('--url <url>')
    .addOption(new Option('--events <type...>', 'the events to send (default: all)').choices(EVENTS))
    .option('--description <text>')
    .option('--inbox <inbox_id...>', 'only events of these inboxes')
    .action(async (o: { url: string; events?: string[]; description?: string; inbox?: string[] }, cmd: Command) => {
      const body = { url: o.url, ...(o.events ? { events: o.events as never } : {}), ...(o.description ? { description: o.description } : {}), ...(o.inbox ? { inbox_ids: o.inbox } : {}) };
      printRecord(cmd, (await client().webhooks.endpoint.create({ body })).data);
    });
  webhooks
    .command('delete <endpoint_id>')
    .description('delete an endpoint (its events stop at once)')
    .action(async (id: string, _o: unknown, cmd: Command) => {
      await client().webhooks.endpoint.delete({ path: { id } });
      printDone(cmd, `deleted ${id}`, { id });
    });
  webhooks
    .command('deliveries <endpoint_id>')
    .description("list an endpoint's delivery attempts")
    .addOption(limitOption())
    .action(async (id: string, o: { limit: number }, cmd: Command) => {
      const mr = client();
      const items = await collect(mr, o.limit, (t, size) => mr.webhooks.delivery.list({ path: { id }, query: pageQuery(t, size) }));
      printList(cmd, items, ['id', 'event_type', 'status', 'http_status', 'attempt', 'created_at']);
    });
  return webhooks;
}

export function keysCommand(): Command {
  const keys = new Command('keys').description("the organization's API keys");
  keys
    .command('list')
    .description('list API keys, newest first (never their secrets)')
    .addOption(limitOption())
    .action(async (o: { limit: number }, cmd: Command) => {
      const mr = client();
      const items = await collect(mr, o.limit, (t, size) => mr.auth.apikey.list({ query: pageQuery(t, size) }));
      printList(cmd, items, ['id', 'name', 'key_prefix', 'scope', 'created_at', 'last_used_at']);
    });
  keys
    .command('create')
    .description('create an API key; its secret is shown this once')
    .requiredOption('--name <name>')
    .addOption(new Option('--scope <scope>').choices(['full', 'read_only', 'send_only', 'custom']))
    .option('--permissions <permission...>', 'what a custom key may do')
    .action(async (o: { name: string; scope?: string; permissions?: string[] }, cmd: Command) => {
      const body = { name: o.name, ...(o.scope ? { scope: o.scope as never } : {}), ...(o.permissions ? { permissions: o.permissions as never } : {}) };
      printRecord(cmd, (await client().auth.apikey.create({ body })).data);
    });
  keys
    .command('revoke <key_id>')
    .description('revoke an API key (requests with it fail within a second)')
    .action(async (id: string, _o: unknown, cmd: Command) => {
      await client().auth.apikey.delete({ path: { id } });
      printDone(cmd, `revoked ${id}`, { id });
    });
  return keys;
}
