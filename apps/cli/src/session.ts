/** login (store the key), tail (new mail by polling) and webhook-listen (a local verifying receiver). */
import { createServer } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { Mailroom, MailroomError, verifyWebhook, WebhookVerificationError } from '@mailroom/sdk';
import { Command, InvalidArgumentError } from 'commander';
import { configDir, configFile, readConfig, writeConfig } from './config';
import { client, isJson, printRecord, UsageError } from './context';

const readStdin = async (): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').trim();
};

export function loginCommand(): Command {
  return new Command('login')
    .description('check an API key and store it (and the base URL) in the config dir, mode 0600; without --api-key the key is read from stdin')
    .option('--api-key <key>', 'the key (mr_...); prefer stdin, which stays out of the shell history')
    .option('--base-url <url>', 'the API (default MAILROOM_BASE_URL, else the stored one, else http://localhost:8080)')
    .action(async (o: { apiKey?: string; baseUrl?: string }, cmd: Command) => {
      const dir = configDir(process.env);
      const stored = readConfig(configFile(dir));
      const apiKey = o.apiKey ?? (await readStdin());
      if (!apiKey) throw new UsageError('no API key: pass --api-key or pipe it on stdin');
      const baseUrl = o.baseUrl ?? process.env.MAILROOM_BASE_URL ?? stored.base_url;
      const mr = new Mailroom({ env: {}, apiKey, ...(baseUrl ? { baseUrl } : {}) });
      // A key that does not work is not stored: the answer's 401 becomes exit code 2. A key
      // without org.read (send_only, custom) is authenticated all the same: its 403 is fine.
      await mr.orgs.organization.get().catch((error: unknown) => {
        if (!(error instanceof MailroomError && error.status === 403)) throw error;
      });
      const file = writeConfig(dir, { ...stored, api_key: apiKey, base_url: mr.baseUrl });
      printRecord(cmd, { config_file: file, base_url: mr.baseUrl });
    });
}

const seconds = (min: number, max: number) => (value: string) => {
  const n = Number(value);
  if (!Number.isFinite(n) || n < min || n > max) throw new InvalidArgumentError(`must be between ${min} and ${max} seconds`);
  return n;
};

export function tailCommand(): Command {
  return new Command('tail')
    .description('follow the mail an inbox receives (message.received), polling the API; Ctrl-C stops')
    .argument('<inbox_id>')
    .option('--interval <seconds>', 'between polls, 1 to 60', seconds(1, 60), 5)
    .action(async (inbox_id: string, o: { interval: number }, cmd: Command) => {
      const mr = client();
      const { data: inbox } = await mr.mailbox.inbox.get({ path: { id: inbox_id } });
      const seen = new Set<string>();
      // From the server's own times, not this machine's clock: what the inbox holds at the
      // first poll is marked seen, and later polls ask for what was received after the newest.
      let after: string | undefined;
      let first = true;
      const stop = new AbortController();
      process.once('SIGINT', () => stop.abort());
      while (!stop.signal.aborted) {
        const { data: page } = await mr.mailbox.message.list({ path: { inbox_id }, query: after ? { after, limit: 100 } : { limit: 100 } });
        // Oldest first; what the inbox itself sent (replies) is not "received".
        for (const m of [...page.data].reverse()) {
          if (seen.has(m.message_id)) continue;
          seen.add(m.message_id);
          if (after === undefined || m.received_at > after) after = m.received_at;
          if (first || m.from_address === inbox.address) continue;
          const line = isJson(cmd) ? JSON.stringify({ type: 'message.received', data: m }) : `${m.received_at}  ${m.message_id}  ${m.from_address}  ${m.subject}`;
          process.stdout.write(`${line}\n`);
        }
        // On stderr also with --json (stdout stays the events): from here on, new mail is printed.
        if (first) process.stderr.write(`following ${inbox.address}; Ctrl-C stops\n`);
        first = false;
        await sleep(o.interval * 1000, undefined, { signal: stop.signal }).catch(() => undefined);
      }
    });
}

export function webhookListenCommand(): Command {
  return new Command('webhook-listen')
    .description('a local webhook receiver for development: verifies each delivery\'s signature and prints it (one JSON line each with --json)')
    .option('--secret <whsec>', "the endpoint's signing secret (default MAILROOM_WEBHOOK_SECRET)")
    .option('--port <port>', 'default 8787; 0 picks a free one', (v) => Number(v), 8787)
    .option('--host <host>', 'the address to listen on', '127.0.0.1')
    .action(async (o: { secret?: string; port: number; host: string }, cmd: Command) => {
      const secret = o.secret ?? process.env.MAILROOM_WEBHOOK_SECRET;
      if (!secret) throw new UsageError('no secret: pass --secret or set MAILROOM_WEBHOOK_SECRET');
      const json = isJson(cmd);
      const server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          try {
            const event = verifyWebhook(Buffer.concat(chunks), req.headers, secret);
            res.writeHead(200).end();
            process.stdout.write(json ? `${JSON.stringify({ verified: true, event })}\n` : `${event.timestamp}  ${event.type}  ${event.id}  ${JSON.stringify(event.data)}\n`);
          } catch (error) {
            const reason = error instanceof WebhookVerificationError ? error.reason : 'error';
            res.writeHead(error instanceof WebhookVerificationError ? 401 : 500).end();
            process.stdout.write(json ? `${JSON.stringify({ verified: false, reason })}\n` : `refused a delivery: ${reason}\n`);
          }
        });
      });
      await new Promise<void>((resolve, reject) => server.once('error', reject).listen(o.port, o.host, resolve));
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : o.port;
      process.stderr.write(`listening on http://${o.host}:${port}/\n`);
      await new Promise<void>((resolve) => process.once('SIGINT', () => server.close(() => resolve())));
    });
}
