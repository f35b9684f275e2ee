import { ROOT_CONTEXT } from '@opentelemetry/api';
import { ProviderError, type HandOver, type MailProvider } from './provider';
import { traceparentOf } from '@mailroom/messaging';
import { TracedProvider, providerServer, spanContextOf } from './traced';

describe('providerServer', () => {
  it('names the host and port a relay URL or an SES endpoint points at, never its credentials', () => {
    expect(providerServer('smtp://user:secret@relay.example.net:587')).toEqual({ address: 'relay.example.net', port: 587 });
    expect(providerServer('smtps://relay.example.net')).toEqual({ address: 'relay.example.net', port: 465 });
    expect(providerServer('smtp://127.0.0.1')).toEqual({ address: '127.0.0.1', port: 25 });
    expect(providerServer('https://email.eu-west-1.amazonaws.com')).toEqual({ address: 'email.eu-west-1.amazonaws.com', port: 443 });
    expect(providerServer('smtp://[::1]:2525')).toEqual({ address: '::1', port: 2525 });
  });
});

describe('TracedProvider with telemetry off (the API a no-op)', () => {
  const message: HandOver = { from: 'bounces+x@agents.test', to: ['ada@example.com'], raw: Buffer.from('x'), envelopeId: 'msg_1' };
  const provider = (send: MailProvider['send']): MailProvider => ({ name: 'smtp', send, close: async () => {} });

  it('passes the acceptance through, with no traceparent to keep', async () => {
    const traced = new TracedProvider(provider(async () => ({ providerMessageId: 'Q1', rejected: [] })), { address: 'relay.test', port: 25 });
    expect(traced.name).toBe('smtp');
    expect(await traced.send(message)).toEqual({ providerMessageId: 'Q1', rejected: [] });
  });

  it('passes a refusal through as it was', async () => {
    const refusal = new ProviderError('550 no', false);
    const traced = new TracedProvider(provider(async () => Promise.reject(refusal)), { address: 'relay.test', port: 25 });
    await expect(traced.send(message)).rejects.toBe(refusal);
  });

  it('reads and writes no trace context', () => {
    expect(traceparentOf(ROOT_CONTEXT)).toBeNull();
    expect(spanContextOf('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01')).toBeUndefined();
    expect(spanContextOf(null)).toBeUndefined();
  });
});
