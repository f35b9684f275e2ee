import { generateKeyPairSync } from 'node:crypto';
import { ConfigError } from '@mailroom/platform';
import { loadConfig } from './config';

const pem = (k: ReturnType<typeof generateKeyPairSync>['privateKey']) => k.export({ type: 'pkcs8', format: 'pem' }).toString();
const KEY = Buffer.alloc(32, 7).toString('base64');

function problems(env: Record<string, string>): string {
  try {
    loadConfig(env);
    return '';
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
}

describe('mail-send configuration', () => {
  it('takes RSA 2048 and ed25519 DKIM keys, and refuses others at start-up', () => {
    expect(problems({ DKIM_PRIVATE_KEY: pem(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey) })).toBe('');
    expect(problems({ DKIM_PRIVATE_KEY: pem(generateKeyPairSync('ed25519').privateKey) })).toBe('');
    expect(problems({ DKIM_PRIVATE_KEY: pem(generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey) })).toMatch(/DKIM_PRIVATE_KEY.*1024 bits; at least 2048/);
    expect(problems({ DKIM_PRIVATE_KEY: pem(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey) })).toMatch(/DKIM_PRIVATE_KEY.*is a ec key/);
    expect(problems({ DKIM_PRIVATE_KEY: 'REPLACE_ME' })).toMatch(/DKIM_PRIVATE_KEY.*not a PEM private key/);
  });

  it('wants a 32-byte secrets key, and in production a key, a DKIM key and https for a trusted SNS prefix', () => {
    expect(problems({ SECRETS_ENCRYPTION_KEY: 'REPLACE_ME' })).toMatch(/SECRETS_ENCRYPTION_KEY.*32 bytes/);
    expect(loadConfig({ SECRETS_ENCRYPTION_KEY: '' }).SECRETS_ENCRYPTION_KEY).not.toBe('');
    const prod = problems({ MAILROOM_ENV: 'production', SNS_TRUSTED_URL_PREFIX: 'http://localstack:4566/' });
    expect(prod).toMatch(/SECRETS_ENCRYPTION_KEY.*required in production/);
    expect(prod).toMatch(/DKIM_PRIVATE_KEY.*required in production/);
    expect(prod).toMatch(/SNS_TRUSTED_URL_PREFIX.*https/);
  });

  it('needs a region for SES, credentials in pairs, and topic ARNs', () => {
    expect(problems({ SECRETS_ENCRYPTION_KEY: KEY, MAIL_PROVIDER: 'ses' })).toMatch(/SES_REGION.*required/);
    expect(problems({ MAIL_PROVIDER: 'ses', SES_REGION: 'eu-west-1', SES_ACCESS_KEY_ID: 'AKID' })).toMatch(/go together/);
    expect(problems({ SES_SNS_TOPIC_ARNS: 'arn:aws:sns:eu-west-1:123456789012:ses, not-an-arn' })).toMatch(/not-an-arn is not an SNS topic ARN/);
    expect(loadConfig({ MAIL_PROVIDER: 'ses', SES_REGION: 'eu-west-1', SES_SNS_TOPIC_ARNS: 'arn:aws:sns:eu-west-1:123456789012:ses' }).SES_SNS_TOPIC_ARNS).toEqual(['arn:aws:sns:eu-west-1:123456789012:ses']);
    expect(problems({ MAIL_PROVIDER: 'mailgun' })).toMatch(/MAIL_PROVIDER/);
  });
});
