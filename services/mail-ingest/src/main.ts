/**
 * The mail-ingest service: the SMTP edge. Owns no tables; hands accepted mail to mailbox through mail.inbound.
 *
 * The composition root: configuration, repositories, clients, domain and handlers are wired
 * in `start` below. `node services/mail-ingest/dist/main.js` runs it alone (libs/runtime gives it its
 * logger, database, bus, lifecycle, health and telemetry); the all-in-one runs it beside the others.
 */
import { readFile } from 'node:fs/promises';
import { AppError, WORK, newId } from '@mailroom/contracts';
import { RpcClient, encodeJson, openBucket, publishStored, storedNothing, watchFacts } from '@mailroom/messaging';
import { runService, type ServiceModule } from '@mailroom/runtime';
import { createResolver } from './clients/dns-resolver';
import { RspamdScanner } from './clients/rspamd';
import { loadConfig, type MailIngestConfig } from './config';
import { Acceptance, NotQueued } from './domain/acceptance';
import { DataScanner } from './domain/data-scanner';
import { ConnectionLimiter, MessageRateLimiter } from './domain/limits';
import { checkMailAuth } from './domain/mail-auth';
import type { Authenticate } from './domain/acceptance';
import { RecipientResolver } from './domain/recipients';
import { ServedDomains } from './domain/served-domains';
import { startSmtpEdge } from './smtp/server';

export const mailIngestService: ServiceModule<MailIngestConfig, never> = {
  name: 'mail-ingest',
  loadConfig,
  async start({ config, bus, life, log, clock }) {
    const raw = await openBucket(bus, 'raw');
    const rpc = new RpcClient(bus, { timeoutMs: 5_000 });
    const served = new ServedDomains(
      new Set([config.MAIL_DOMAIN, ...config.MAIL_EXTRA_DOMAINS]),
      (domain_name) => rpc.asService('mail-ingest', 'domains.domain.route', { domain_name }, { requestId: newId('request') }),
      config.DOMAIN_ROUTE_CACHE_TTL_MS,
    );
    // From now on: what happened before start is not in the cache, which starts empty.
    const facts = await watchFacts(bus, 'DOMAINS_FACTS', ['internal.domains.domain.changed'], new Date(), (_subject, fact) => served.forget(fact.domain_name));
    life.add('mail-ingest:domain-facts', facts, (f) => f.stop());
    const recipients = new RecipientResolver(
      served,
      async (address) => {
        try {
          const r = await rpc.asService('mail-ingest', 'mailbox.inbox.resolve', { address }, { requestId: newId('request') });
          return { inbox_id: r.inbox_id, org_id: r.org_id, env_id: r.env_id };
        } catch (err) {
          if (err instanceof AppError && err.code === 'not_found') return null;
          throw err;
        }
      },
      config.RCPT_CACHE_TTL_MS,
      Date.now,
      config.BOUNCE_DOMAIN,
    );
    // Stopped after the SMTP edge (lifecycles stop in reverse): queries still in flight end then.
    const dns = life.add('mail-ingest:dns', createResolver({ servers: config.DNS_SERVERS, timeoutMs: config.DNS_TIMEOUT_MS }), (r) => r.cancel());
    const authenticate: Authenticate = (m) => checkMailAuth({ ...m, mta: config.SMTP_HOSTNAME }, { resolve: dns.resolve, timeoutMs: config.AUTH_TIMEOUT_MS });
    const spam = life.add('mail-ingest:rspamd', new RspamdScanner(config.RSPAMD_URL, config.RSPAMD_TIMEOUT_MS, { spamScore: config.SPAM_SCORE, rejectScore: config.SPAM_REJECT_SCORE }), (s) => s.close());
    /** A work item, acknowledged by JetStream; NotQueued when no stream took it (nothing stored). */
    const queue = async (subject: string, msgID: string, data: Uint8Array): Promise<void> => {
      try {
        await publishStored(bus, subject, data, { msgID, timeout: 5_000 });
      } catch (err) {
        if (storedNothing(err)) throw new NotQueued(`no stream took ${subject}`, { cause: err });
        throw err;
      }
    };
    const acceptance = new Acceptance(
      authenticate,
      spam,
      {
        putRaw: async (rawId, bytes) => void (await raw.putBlob({ name: rawId }, bytes)),
        deleteRaw: async (rawId) => void (await raw.delete(rawId)),
        publish: (item) => queue(WORK.inbound, item.raw_id, encodeJson(item)),
        publishFeedback: (item) => queue(WORK.feedback, item.raw_id, encodeJson(item)),
      },
      clock,
      config.SMTP_INLINE_RAW_MAX_BYTES,
    );
    const tls =
      config.SMTP_TLS_CERT_FILE && config.SMTP_TLS_KEY_FILE
        ? { cert: await readFile(config.SMTP_TLS_CERT_FILE), key: await readFile(config.SMTP_TLS_KEY_FILE) }
        : undefined;
    const edge = await startSmtpEdge(
      {
        port: config.SMTP_PORT,
        host: config.SMTP_HOST,
        hostname: config.SMTP_HOSTNAME,
        maxBytes: config.SMTP_MAX_MESSAGE_BYTES,
        maxRecipients: config.SMTP_MAX_RECIPIENTS,
        maxClients: config.SMTP_MAX_CLIENTS,
        socketTimeoutMs: config.SMTP_SOCKET_TIMEOUT_MS,
        tls,
      },
      {
        connections: new ConnectionLimiter(config.SMTP_MAX_CONNECTIONS_PER_IP),
        rate: new MessageRateLimiter(config.SMTP_MAX_MESSAGES_PER_MINUTE_PER_IP),
        recipients,
        acceptance,
        scanner: (max) => new DataScanner(max),
        log,
      },
    );
    life.add('mail-ingest:smtp', edge, (e) => e.close());
    const host = config.SMTP_HOST === '0.0.0.0' || config.SMTP_HOST === '::' ? '127.0.0.1' : config.SMTP_HOST;
    log.info({ port: edge.port, tls: Boolean(tls), rspamd: config.RSPAMD_URL ?? 'off' }, 'SMTP edge listening');
    return { endpoints: { smtp: `smtp://${host}:${edge.port}` } };
  },
};

if (require.main === module) void runService(mailIngestService, process.env);
