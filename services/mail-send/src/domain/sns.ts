/**
 * Amazon SNS messages POSTed to us over HTTP: checking that SNS sent them. SNS signs a
 * canonical string of the message's fields with the key of a certificate it serves over
 * HTTPS from an SNS host (SignatureVersion 1: SHA1withRSA, 2: SHA256withRSA). We accept a
 * certificate only from https://sns.<region>.amazonaws.com(.cn)/...pem (or from a prefix the
 * operator configures, for an SNS emulator or tests), fetch it with a timeout and a size
 * bound, check its validity dates, and keep it for the next messages. A signature proves the
 * message came from SNS, not from our topic: the topic is checked by the caller.
 *
 * Ours rather than sns-payload-validator: that library fetches without a timeout, a status
 * check or a size bound, checks no certificate dates, and cannot be pointed at anything but
 * AWS, so it could not be tested here.
 */
import { X509Certificate, createVerify } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { z } from 'zod';
import { AppError } from '@mailroom/contracts';
import type { FetchText } from './ports';

export const snsMessage = z.object({
  Type: z.enum(['Notification', 'SubscriptionConfirmation', 'UnsubscribeConfirmation']),
  MessageId: z.string().min(1).max(100),
  TopicArn: z.string().min(1).max(256),
  Message: z.string(),
  Timestamp: z.string(),
  SignatureVersion: z.enum(['1', '2']),
  Signature: z.string().min(1),
  SigningCertURL: z.string().min(1).max(2048),
  Subject: z.string().optional(),
  SubscribeURL: z.string().optional(),
  Token: z.string().optional(),
});
export type SnsMessage = z.infer<typeof snsMessage>;

/** The fields signed, in order, per message type (absent optional fields are left out). */
const SIGNED: Record<SnsMessage['Type'], (keyof SnsMessage)[]> = {
  Notification: ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'],
  SubscriptionConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
  UnsubscribeConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
};

export function stringToSign(m: SnsMessage): string {
  let out = '';
  for (const key of SIGNED[m.Type]) {
    const value = m[key];
    if (value !== undefined) out += `${key}\n${value}\n`;
  }
  return out;
}

const SNS_HOST = /^sns\.[a-z0-9-]{3,}\.amazonaws\.com(\.cn)?$/;
const MAX_CERT_BYTES = 16 * 1024;
const CERT_CACHE = 100;

export class SnsVerifier {
  private readonly certs = new LRUCache<string, X509Certificate>({ max: CERT_CACHE });

  constructor(
    /** Also trusted: URLs starting with this (an SNS emulator, tests). Empty: AWS only. */
    private readonly extraPrefix: string,
    private readonly fetch: FetchText,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** An SNS host's HTTPS URL (certificates, subscription confirmations), or one under the configured prefix. */
  trusts(url: string, path?: RegExp): boolean {
    if (this.extraPrefix && url.startsWith(this.extraPrefix)) return true;
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return false;
    }
    return u.protocol === 'https:' && u.port === '' && SNS_HOST.test(u.hostname) && (!path || path.test(u.pathname));
  }

  /** Parses and verifies a POSTed body: 400 when it is not an SNS message, 403 when the signature does not hold. */
  async verify(body: string): Promise<SnsMessage> {
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      throw new AppError('invalid_request', 'not an SNS message: the body is not JSON');
    }
    const parsed = snsMessage.safeParse(json);
    if (!parsed.success) throw new AppError('invalid_request', `not an SNS message: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'body'} ${i.message}`).join('; ')}`);
    const m = parsed.data;
    if (!this.trusts(m.SigningCertURL, /\.pem$/)) throw new AppError('forbidden', 'SigningCertURL is not an SNS certificate URL');
    const cert = await this.certificate(m.SigningCertURL);
    const verifier = createVerify(m.SignatureVersion === '1' ? 'RSA-SHA1' : 'RSA-SHA256');
    verifier.update(stringToSign(m), 'utf8');
    let ok = false;
    try {
      ok = verifier.verify(cert.publicKey, m.Signature, 'base64');
    } catch {
      ok = false;
    }
    if (!ok) throw new AppError('forbidden', 'the SNS signature does not verify');
    return m;
  }

  private async certificate(url: string): Promise<X509Certificate> {
    let cert = this.certs.get(url);
    if (!cert) {
      let pem: string;
      try {
        pem = await this.fetch(url, MAX_CERT_BYTES);
      } catch (err) {
        throw new AppError('service_unavailable', `the SNS signing certificate could not be fetched: ${(err as Error).message}`);
      }
      try {
        cert = new X509Certificate(pem);
      } catch {
        throw new AppError('forbidden', 'SigningCertURL does not serve a certificate');
      }
      this.certs.set(url, cert);
    }
    const now = this.now().getTime();
    if (now < Date.parse(cert.validFrom) || now > Date.parse(cert.validTo)) throw new AppError('forbidden', 'the SNS signing certificate is not valid now');
    return cert;
  }
}
