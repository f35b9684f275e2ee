/**
 * The mailbox service: inboxes, threads, messages, labels, attachments; stores accepted inbound mail.
 *
 * The composition root: configuration, repositories, clients, domain and handlers are wired
 * in `start` below. `node services/mailbox/dist/main.js` runs it alone (libs/runtime gives it its
 * logger, database, bus, lifecycle, health and telemetry); the all-in-one runs it beside the others.
 */
import path from 'node:path';
import { transactor } from '@mailroom/db';
import { RpcClient, openBucket, serveRpc } from '@mailroom/messaging';
import { newId } from '@mailroom/contracts';
import { DeletedEnvironments, Outbox, runService, type ServiceModule } from '@mailroom/runtime';
import { customDomainsClient } from './clients/custom-domains.client';
import { planLimitsClient } from './clients/plan-limits.client';
import { loadConfig, type MailboxConfig } from './config';
import { startEnvironmentDeletedConsumer } from './consumers/environment-deleted.consumer';
import { startInboundConsumer } from './consumers/mail-inbound.consumer';
import { InboundStore } from './domain/inbound';
import { Inboxes } from './domain/inboxes';
import { Messages } from './domain/messages';
import { Sending } from './domain/sending';
import { MailboxUsage } from './domain/usage';
import { MailParser } from './parsing/parser';
import { InboxRepository } from './repo/inbox.repository';
import { MessageRepository } from './repo/message.repository';
import type { MailboxDb } from './repo/tables';
import { mailboxHandlers } from './rpc/handlers';
import { MailboxExport } from './domain/export';
import { MailboxExportRepository } from './repo/export.repository';
import { UploadRepository } from './repo/upload.repository';
import { SendRequestRepository } from './repo/send-request.repository';
import { Uploads } from './domain/uploads';
import { copyUpload, uploadObjects } from './clients/upload-objects.client';

export const mailboxService: ServiceModule<MailboxConfig, MailboxDb> = {
  name: 'mailbox',
  database: { schema: 'mailbox', migrationsDir: path.join(__dirname, '..', 'migrations') },
  loadConfig,
  async start({ config, bus, db, life, clock, log }) {
    const [rawBucket, receivedBucket, attachmentBucket, uploadBucket] = await Promise.all([openBucket(bus, 'raw'), openBucket(bus, 'received'), openBucket(bus, 'attachments'), openBucket(bus, 'uploads')]);
    const inboxRepo = new InboxRepository(db);
    const messageRepo = new MessageRepository(db);
    const outbox = life.add('mailbox:outbox', new Outbox(db, bus, log, { service: 'mailbox' }), (o) => o.stop());
    outbox.start();
    const parser = life.add(
      'mailbox:parser',
      new MailParser({ workers: config.PARSE_WORKERS, timeoutMs: config.PARSE_TIMEOUT_MS, maxHtmlBytes: config.PARSE_MAX_HTML_BYTES, workerHeapMb: config.PARSE_WORKER_HEAP_MB }),
      (p) => p.close(),
    );
    const store = new InboundStore(
      inboxRepo,
      messageRepo,
      { get: (rawId) => rawBucket.getBlob(rawId), put: async (rawId, raw) => void (await receivedBucket.putBlob({ name: rawId }, raw)) },
      { put: async (name, content) => void (await attachmentBucket.putBlob({ name }, content)) },
      parser,
      outbox,
      clock,
    );
    const rpc = new RpcClient(bus, { timeoutMs: 5_000 });
    const inboxes = new Inboxes(inboxRepo, clock, config.MAIL_DOMAIN, transactor(db), planLimitsClient(rpc), new DeletedEnvironments<MailboxDb>(), customDomainsClient(rpc));
    const receivedRaws = { has: async (rawId: string) => (await receivedBucket.info(rawId)) !== null };
    const messages = new Messages(transactor(db), messageRepo, inboxRepo, receivedRaws);
    const uploads = new Uploads(new UploadRepository(db), uploadObjects(uploadBucket), clock, config.SEND_MAX_MESSAGE_BYTES);
    const sendRequests = new SendRequestRepository(db);
    const sending = new Sending(
      inboxRepo,
      messageRepo,
      outbox,
      { check: async (req) => void (await rpc.asService('mailbox', 'mail-send.outbound.check', req, { requestId: newId('request') })) },
      {
        put: async (name, content) => void (await attachmentBucket.putBlob({ name }, content)),
        copyUpload: (upload, name) => copyUpload(bus, uploadBucket, attachmentBucket, upload, name),
      },
      clock,
      uploads,
      config.SEND_MAX_MESSAGE_BYTES,
      sendRequests,
    );
    // Expired uploads' rows; their objects go with the bucket's lifetime.
    const prune = setInterval(() => {
      void uploads.prune().catch((err: unknown) => log.warn({ err }, 'pruning expired uploads failed'));
      // Past the gateway's idempotency window (24 h), a request key is never sent again.
      void sendRequests.deleteOlder(new Date(clock.now().getTime() - 25 * 3_600_000)).catch((err: unknown) => log.warn({ err }, 'pruning send request keys failed'));
    }, 600_000);
    prune.unref();
    life.add('mailbox:uploads-prune', prune, (t) => clearInterval(t));
    life.add('mailbox:rpc', serveRpc(bus, 'mailbox', mailboxHandlers(inboxes, messages, sending, new MailboxUsage(inboxRepo), new MailboxExport(new MailboxExportRepository(db), receivedRaws), uploads)), (s) => s.stop());
    life.add('mailbox:inbound', await startInboundConsumer(bus, store, config.INBOUND_CONCURRENCY), (c) => c.stop());
    life.add('mailbox:environment-deleted', await startEnvironmentDeletedConsumer(bus, inboxes), (c) => c.stop());
  },
};

if (require.main === module) void runService(mailboxService, process.env);
