/**
 * The gateway: the only HTTP entry; owns no tables.
 *
 * The composition root: configuration, the authenticator, limits, idempotency, the route
 * table and the HTTP server are wired in `start` below. `node services/gateway/dist/main.js`
 * runs it alone (libs/runtime gives it its logger, bus, lifecycle, health and telemetry);
 * the all-in-one runs it beside the others.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { RpcClient, openBucket, readObject, watchFacts, type ObjectStore } from '@mailroom/messaging';
import { IpPolicy, SecretBox, guardedFetch } from '@mailroom/platform';
import { runService, type ServiceModule } from '@mailroom/runtime';
import { createApp } from './app';
import { Authenticator } from './auth/authenticator';
import { loadConfig, type GatewayConfig } from './config';
import { answerClientErrors } from './http/client-error';
import { IdempotencyStore } from './http/idempotency';
import type { Download, ObjectReader } from './http/download';
import { RateLimiter } from './http/rate-limit';
import { API_VERSION, buildOpenApi } from './openapi';
import { DownloadLinks, downloadLinkKey } from './domain/download-links';
import { ROUTES } from './routes';

export const gatewayService: ServiceModule<GatewayConfig, never> = {
  name: 'gateway',
  loadConfig,
  async start({ config, bus, life, log, clock }) {
    const rpc = new RpcClient(bus, { timeoutMs: config.RPC_TIMEOUT_MS });
    const authenticator = new Authenticator(
      (stream, subjects, since, onFact) => watchFacts(bus, stream, subjects, since, onFact),
      rpc,
      {
        issuer: config.AUTH_ISSUER,
        audience: config.AUTH_AUDIENCE,
        apiKeyCacheTtlMs: config.API_KEY_CACHE_TTL_MS,
        accessTokenTtlSeconds: config.ACCESS_TOKEN_TTL_SECONDS,
      },
      clock,
      log,
    );
    life.add('gateway:authenticator', authenticator, (a) => a.stop());
    await authenticator.start();
    const [raw, received, sent, attachments, exports, uploads] = await Promise.all([openBucket(bus, 'raw'), openBucket(bus, 'received'), openBucket(bus, 'sent'), openBucket(bus, 'attachments'), openBucket(bus, 'exports'), openBucket(bus, 'uploads')]);
    // Downloads read a few chunks ahead of the client (readObject), not the whole object as
    // @nats-io/obj's get() would for a slow client: memory does not grow with file size.
    const reader = (bucket: Download['bucket'], store: ObjectStore): ObjectReader => ({
      get: async (name) => {
        const object = await readObject(bus, store, bucket, name);
        return object && { info: { size: object.size }, data: Readable.toWeb(object.data) as ReadableStream<Uint8Array> };
      },
    });
    const app = createApp({
      buckets: { raw: reader('raw', raw), received: reader('received', received), sent: reader('sent', sent), attachments: reader('attachments', attachments), exports: reader('exports', exports) },
      uploads: { bucket: uploads, maxBytes: config.SEND_MAX_MESSAGE_BYTES },
      links: new DownloadLinks(downloadLinkKey(config.SECRETS_ENCRYPTION_KEY), config.DOWNLOAD_LINK_TTL_SECONDS, clock),
      publicUrl: config.PUBLIC_API_URL,
      urlAttachments: { fetch: guardedFetch(new IpPolicy(config.attachmentUrlAllowedCidrs), config.ATTACHMENT_URL_TIMEOUT_MS), timeoutMs: config.ATTACHMENT_URL_TIMEOUT_MS },
      routes: ROUTES,
      authenticator,
      rpc,
      limiter: new RateLimiter(config.RATE_LIMIT_PER_SECOND, config.RATE_LIMIT_BURST),
      anonymousLimiter: new RateLimiter(config.RATE_LIMIT_ANONYMOUS_PER_MINUTE / 60, Math.max(1, config.RATE_LIMIT_ANONYMOUS_PER_MINUTE)),
      idempotency: await IdempotencyStore.open(bus, new SecretBox(config.SECRETS_ENCRYPTION_KEY)),
      openapi: buildOpenApi(ROUTES, API_VERSION),
      log,
      bodyLimitBytes: config.BODY_LIMIT_BYTES,
      rpcTimeoutMs: config.RPC_TIMEOUT_MS,
      trustProxy: config.TRUST_PROXY,
    });
    // A missing Host header and an unknown Expect are refused by the app, in the error shape;
    // what the parser refuses is answered by answerClientErrors.
    const server = createServer({ requestTimeout: 30_000, headersTimeout: 10_000, keepAliveTimeout: 5_000, requireHostHeader: false }, app);
    server.on('checkExpectation', app);
    answerClientErrors(server, log);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.HTTP_PORT, config.HTTP_HOST, () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    const host = config.HTTP_HOST === '0.0.0.0' || config.HTTP_HOST === '::' ? '127.0.0.1' : config.HTTP_HOST;
    // Stops taking connections, lets requests in flight finish, then closes the idle ones.
    life.add('gateway:http', server, (s) =>
      new Promise<void>((resolve) => {
        s.close(() => resolve());
        s.closeIdleConnections();
        setTimeout(() => s.closeAllConnections(), 5_000).unref();
      }),
    );
    log.info({ url: `http://${host}:${port}` }, 'gateway listening');
    return { endpoints: { http: `http://${host}:${port}` }, checks: { facts: async () => authenticator.ready() } };
  },
};

if (require.main === module) void runService(gatewayService, process.env);
