/** DKIM key pairs (RSA 2048, node:crypto, off the event loop), as the domain's MakeDkimKey port. */
import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';
import type { MakeDkimKey } from '../domain/ports';

const generate = promisify(generateKeyPair);

export const makeDkimKey: MakeDkimKey = async () => {
  const { publicKey, privateKey } = await generate('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { publicKey: publicKey.toString('base64'), privateKeyPem: privateKey };
};
