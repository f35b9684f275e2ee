import { createSign } from 'node:crypto';
import { generate } from 'selfsigned';
import { AppError } from '@mailroom/contracts';
import { SnsVerifier, stringToSign, type SnsMessage } from './sns';

const CERT_URL = 'https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-0123456789abcdef0123456789abcdef.pem';
let pems: { private: string; cert: string };
let expired: { private: string; cert: string };

beforeAll(async () => {
  pems = await generate([{ name: 'commonName', value: 'sns.amazonaws.com' }], { keySize: 2048, algorithm: 'sha256' });
  expired = await generate([{ name: 'commonName', value: 'sns.amazonaws.com' }], { keySize: 2048, algorithm: 'sha256', notBeforeDate: new Date('2020-01-01'), notAfterDate: new Date('2021-01-01') });
});

function signed(fields: Partial<SnsMessage>, key = pems.private, version: '1' | '2' = '2'): SnsMessage {
  const m = {
    Type: 'Notification',
    MessageId: '22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324',
    TopicArn: 'arn:aws:sns:eu-west-1:123456789012:ses',
    Message: '{"eventType":"Delivery"}',
    Timestamp: '2026-11-22T10:00:00.000Z',
    SignatureVersion: version,
    Signature: '',
    SigningCertURL: CERT_URL,
    ...fields,
  } as SnsMessage;
  m.Signature = createSign(version === '1' ? 'RSA-SHA1' : 'RSA-SHA256').update(stringToSign(m)).sign(key, 'base64');
  return m;
}

function verifier(fetched: string[] = [], cert = () => pems.cert) {
  return new SnsVerifier('', async (url) => {
    fetched.push(url);
    return cert();
  });
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    return err instanceof AppError ? err.code : String(err);
  }
}

describe('SNS message signatures', () => {
  it('signs the documented fields in order, leaving out an absent Subject', () => {
    const m = signed({});
    expect(stringToSign(m)).toBe(`Message\n{"eventType":"Delivery"}\nMessageId\n${m.MessageId}\nTimestamp\n${m.Timestamp}\nTopicArn\n${m.TopicArn}\nType\nNotification\n`);
    expect(stringToSign({ ...m, Subject: 'Hi' })).toContain('MessageId\n22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324\nSubject\nHi\nTimestamp\n');
    const confirmation = signed({ Type: 'SubscriptionConfirmation', Token: 't0k', SubscribeURL: 'https://sns.eu-west-1.amazonaws.com/?Action=ConfirmSubscription' });
    expect(stringToSign(confirmation)).toBe(
      `Message\n{"eventType":"Delivery"}\nMessageId\n${m.MessageId}\nSubscribeURL\nhttps://sns.eu-west-1.amazonaws.com/?Action=ConfirmSubscription\nTimestamp\n${m.Timestamp}\nToken\nt0k\nTopicArn\n${m.TopicArn}\nType\nSubscriptionConfirmation\n`,
    );
  });

  it('accepts SignatureVersion 1 and 2, and fetches a certificate once', async () => {
    const fetched: string[] = [];
    const v = verifier(fetched);
    await expect(v.verify(JSON.stringify(signed({}, pems.private, '2')))).resolves.toMatchObject({ Type: 'Notification' });
    await expect(v.verify(JSON.stringify(signed({}, pems.private, '1')))).resolves.toMatchObject({ SignatureVersion: '1' });
    expect(fetched).toEqual([CERT_URL]);
  });

  it('refuses a changed field, another key, a bad signature, an expired certificate', async () => {
    const m = signed({});
    expect(await codeOf(verifier().verify(JSON.stringify({ ...m, Message: '{"eventType":"Bounce"}' })))).toBe('forbidden');
    expect(await codeOf(verifier().verify(JSON.stringify({ ...m, TopicArn: 'arn:aws:sns:eu-west-1:999999999999:evil' })))).toBe('forbidden');
    expect(await codeOf(verifier().verify(JSON.stringify({ ...m, Signature: 'AAAA' })))).toBe('forbidden');
    expect(await codeOf(verifier().verify(JSON.stringify(signed({}, expired.private))))).toBe('forbidden');
    expect(await codeOf(verifier([], () => expired.cert).verify(JSON.stringify(signed({}, expired.private))))).toBe('forbidden');
    expect(await codeOf(verifier([], () => 'not a certificate').verify(JSON.stringify(m)))).toBe('forbidden');
  });

  it('takes certificates from SNS hosts over HTTPS only, and never fetches another', async () => {
    for (const url of [
      'http://sns.eu-west-1.amazonaws.com/SimpleNotificationService-x.pem',
      'https://sns.eu-west-1.amazonaws.com.evil.test/SimpleNotificationService-x.pem',
      'https://evil.test/sns.eu-west-1.amazonaws.com/x.pem',
      'https://sns.eu-west-1.amazonaws.com:8443/SimpleNotificationService-x.pem',
      'https://s3.amazonaws.com/SimpleNotificationService-x.pem',
      'https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-x.txt',
      'not a url',
    ]) {
      const fetched: string[] = [];
      expect([url, await codeOf(verifier(fetched).verify(JSON.stringify(signed({ SigningCertURL: url }))))]).toEqual([url, 'forbidden']);
      expect(fetched).toEqual([]);
    }
    expect(verifier().trusts('https://sns.cn-north-1.amazonaws.com.cn/SimpleNotificationService-x.pem', /\.pem$/)).toBe(true);
    expect(new SnsVerifier('http://127.0.0.1:9/sns/', async () => '').trusts('http://127.0.0.1:9/sns/cert.pem')).toBe(true);
  });

  it('answers 400 for what is not an SNS message, 503 when the certificate cannot be fetched', async () => {
    expect(await codeOf(verifier().verify('not json'))).toBe('invalid_request');
    expect(await codeOf(verifier().verify('{"Type":"Notification"}'))).toBe('invalid_request');
    expect(await codeOf(verifier().verify(JSON.stringify({ ...signed({}), SignatureVersion: '3' })))).toBe('invalid_request');
    const down = new SnsVerifier('', async () => {
      throw new Error('connect ECONNREFUSED');
    });
    expect(await codeOf(down.verify(JSON.stringify(signed({}))))).toBe('service_unavailable');
  });
});
