/**
 * The mail-send service: outbound composition, DKIM, hand-over to the provider (SMTP relay or SES), feedback (SMTP reports, SES notifications), suppression list.
 *
 * The composition root: configuration, repositories, clients, domain and handlers are wired
 * in `start` below. `node services/mail-send/dist/main.js` runs it alone (libs/runtime gives it its
 * logger, database, bus, lifecycle, health and telemetry); the all-in-one runs it beside the others.
 */
import { generateKeyPairSync } from 'node:crypto';
import path from 'node:path';
import { Readable } from 'node:stream';
import { transactor } from '@mailroom/db';
import { newId } from '@mailroom/contracts';
import { RpcClient, openBucket, readObject, serveRpc, watchFacts } from '@mailroom/messaging';
import { SecretBox } from '@mailroom/platform';
import { Outbox, runService, type ServiceModule } from '@mailroom/runtime';
import { fetchText } from './clients/fetch-text';
import { keyOpener, signingKeysClient } from './clients/signing-keys.client';
import { loadConfig, type MailSendConfig } from './config';
import { startFeedbackConsumer } from './consumers/mail-feedback.consumer';
import { startOutboundConsumer } from './consumers/mail-outbound.consumer';
import { startSystemMailConsumer } from './consumers/mail-system.consumer';
import { parseFeedback } from './domain/feedback';
import { FeedbackHandler } from './domain/feedback-handler';
import { OrgStatuses, SendChecks } from './domain/checks';
import { SesNotifications } from './domain/ses-notifications';
import { SnsVerifier } from './domain/sns';
import { dkimKey, type DkimKey } from './domain/dkim';
import { OutboundSender } from './domain/outbound';
import { OutboundIdentity, SendingDomains } from './domain/sending-domains';
import { SystemMailFeedback } from './domain/system-mail/system-feedback';
import { SystemMailer } from './domain/system-mail/system-mailer';
import { Suppressions } from './domain/suppressions';
import { Verp } from './domain/verp';
import type { MailProvider } from './providers/provider';
import { SesProvider } from './providers/ses';
import { SmtpRelayProvider } from './providers/smtp';
import { TracedProvider, providerServer } from './providers/traced';
import { SendRepository } from './repo/send.repository';
import { SystemMailRepository } from './repo/system-mail.repository';
import type { SendDb } from './repo/tables';
import { mailSendHandlers } from './rpc/handlers';

export const mailSendService: ServiceModule<MailSendConfig, SendDb> = {
  name: 'mail-send',
  database: { schema: 'mail_send', migrationsDir: path.join(__dirname, '..', 'migrations') },
  loadConfig,
  async start({ config, bus, db, life, clock, log }) {
    // Reports come as mail-ingest received them; what is sent is kept in a bucket of its own.
    const [raw, sent] = await Promise.all([openBucket(bus, 'raw'), openBucket(bus, 'sent')]);
    const attachmentBucket = await openBucket(bus, 'attachments');
    const repo = new SendRepository(db);
    const outbox = life.add('mail-send:outbox', new Outbox(db, bus, log, { service: 'mail-send' }), (o) => o.stop());
    outbox.start();
    let dkim: DkimKey;
    if (config.DKIM_PRIVATE_KEY) {
      dkim = dkimKey(config.MAIL_DOMAIN, config.DKIM_SELECTOR, config.DKIM_PRIVATE_KEY);
    } else {
      // Development only (production requires a key): signed with a throwaway key nobody publishes.
      const { privateKey } = generateKeyPairSync('ed25519');
      dkim = { domain: config.MAIL_DOMAIN, selector: config.DKIM_SELECTOR, privateKey };
      log.warn('DKIM_PRIVATE_KEY is not set: signing with a throwaway key; receivers will not verify the signatures');
    }
    const provider: MailProvider =
      config.MAIL_PROVIDER === 'ses'
        ? new SesProvider({
            region: config.SES_REGION!,
            endpoint: config.SES_ENDPOINT,
            configurationSet: config.SES_CONFIGURATION_SET,
            credentials: config.SES_ACCESS_KEY_ID ? { accessKeyId: config.SES_ACCESS_KEY_ID, secretAccessKey: config.SES_SECRET_ACCESS_KEY! } : undefined,
          })
        : new SmtpRelayProvider(config.SMTP_RELAY_URL, config.MAIL_DOMAIN);
    life.add('mail-send:provider', provider, (p) => p.close());
    // Each hand-over a client span (a no-op with telemetry off), whose traceparent the send keeps.
    const traced = new TracedProvider(
      provider,
      providerServer(config.MAIL_PROVIDER === 'ses' ? (config.SES_ENDPOINT ?? `https://email.${config.SES_REGION}.amazonaws.com`) : config.SMTP_RELAY_URL),
    );
    const verp = new Verp(config.SECRETS_ENCRYPTION_KEY, config.BOUNCE_DOMAIN);
    const transact = transactor(db);
    const rpc = new RpcClient(bus, { timeoutMs: 5_000 });
    // Custom domains' keys (issue 25, part 7): fetched from domains, kept until a fact about the domain or the TTL.
    const sendingDomains = new SendingDomains(signingKeysClient(rpc), keyOpener(new SecretBox(config.SECRETS_ENCRYPTION_KEY)), clock, config.DOMAIN_KEY_CACHE_TTL_MS);
    // From now on the server's clock (the stream's timestamps), not the platform's (tests move it): nothing is cached before.
    const domainFacts = await watchFacts(bus, 'DOMAINS_FACTS', ['internal.domains.domain.changed'], new Date(), (_subject, fact) => sendingDomains.forget(fact.org_id, fact.env_id, fact.domain_name));
    life.add('mail-send:domain-facts', domainFacts, (w) => w.stop());
    const sender = new OutboundSender(
      transact,
      repo,
      traced,
      {
        put: async (name, raw) => void (await sent.put({ name }, Readable.toWeb(raw) as ReadableStream<Uint8Array>)),
        open: async (name) => (await readObject(bus, sent, 'sent', name))?.data ?? null,
        delete: async (name) => void (await sent.delete(name)),
      },
      async (object) => (await readObject(bus, attachmentBucket, 'attachments', object))?.data ?? null,
      new OutboundIdentity(config.MAIL_DOMAIN, dkim, verp, sendingDomains),
      outbox,
      clock,
    );
    const orgStatuses = new OrgStatuses(async (orgId) => (await rpc.asService('mail-send', 'orgs.organization.get', { org_id: orgId }, { requestId: newId('request') })).status, clock);
    const checks = new SendChecks(
      transact,
      repo,
      outbox,
      clock,
      { perInboxPerMinute: config.SEND_RATE_PER_INBOX_PER_MINUTE, perOrgPerMinute: config.SEND_RATE_PER_ORG_PER_MINUTE },
      orgStatuses,
      { ownDomain: config.MAIL_DOMAIN, domains: sendingDomains },
    );
    const systemMails = new SystemMailRepository(db);
    const feedback = new FeedbackHandler(transact, repo, verp, parseFeedback, outbox, clock, new SystemMailFeedback(transact, systemMails, () => clock.now()));
    const ses = config.SES_SNS_TOPIC_ARNS.length
      ? new SesNotifications(new SnsVerifier(config.SNS_TRUSTED_URL_PREFIX, fetchText, () => clock.now()), new Set(config.SES_SNS_TOPIC_ARNS), repo, feedback, clock, fetchText)
      : undefined;
    life.add('mail-send:rpc', serveRpc(bus, 'mail-send', mailSendHandlers(checks, new Suppressions(repo), ses)), (s) => s.stop());
    life.add('mail-send:outbound', await startOutboundConsumer(bus, sender, config.OUTBOUND_CONCURRENCY), (c) => c.stop());
    const systemMailer = new SystemMailer(systemMails, traced, dkim, { address: config.SYSTEM_MAIL_FROM, name: config.SYSTEM_MAIL_FROM_NAME }, verp, config.MAIL_DOMAIN, clock);
    life.add('mail-send:system', await startSystemMailConsumer(bus, systemMailer), (c) => c.stop());
    life.add('mail-send:account', await startSystemMailConsumer(bus, systemMailer, 'mail.account'), (c) => c.stop());
    life.add('mail-send:admin', await startSystemMailConsumer(bus, systemMailer, 'mail.admin'), (c) => c.stop());
    life.add('mail-send:feedback', await startFeedbackConsumer(bus, feedback, raw), (c) => c.stop());
    // The send log only needs the last minute; keep an hour for inspection.
    const prune = setInterval(() => void repo.pruneSendLog(new Date(clock.now().getTime() - 3_600_000)).catch(() => undefined), 60_000);
    prune.unref();
    life.add('mail-send:prune', prune, (t) => clearInterval(t));
    if (config.MAIL_PROVIDER === 'ses') log.info({ provider: 'ses', region: config.SES_REGION, configuration_set: config.SES_CONFIGURATION_SET, sns_topics: config.SES_SNS_TOPIC_ARNS.length }, 'sending through Amazon SES');
    else log.info({ provider: 'smtp', relay: new URL(config.SMTP_RELAY_URL).host, bounce_domain: config.BOUNCE_DOMAIN }, 'sending through the relay');
  },
};

if (require.main === module) void runService(mailSendService, process.env);
