/**
 * A throwaway certificate authority and a server certificate it signed, made with the openssl
 * CLI (the tool an operator would use, so the files are what a deployment would hold).
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findProgram } from './programs';

export interface TlsFiles {
  caFile: string;
  certFile: string;
  keyFile: string;
}

/**
 * Writes ca.crt, server.crt and server.key into `dir`: a CA, and a certificate signed by it
 * for 127.0.0.1 under the names clients check (subjectAltName): `localhost` and the address.
 * Connect to it as `tls://localhost:<port>`: nats.js checks the certificate against the
 * URL's host name, and against "localhost" when the URL holds an IP address (Node has no
 * name to compare then). Valid for one day.
 */
export function makeServerCertificate(dir: string): TlsFiles {
  const openssl = findProgram('openssl', { install: 'install it (Debian: apt-get install openssl)' });
  const run = (...args: string[]) => execFileSync(openssl, args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  run('req', '-x509', ...ec, '-days', '1', '-subj', '/CN=Mailroom test CA', '-keyout', 'ca.key', '-out', 'ca.crt',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  run('req', '-new', ...ec, '-subj', '/CN=localhost', '-keyout', 'server.key', '-out', 'server.csr');
  writeFileSync(join(dir, 'server.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  run('x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-set_serial', '1', '-days', '1', '-extfile', 'server.ext', '-out', 'server.crt');
  return { caFile: join(dir, 'ca.crt'), certFile: join(dir, 'server.crt'), keyFile: join(dir, 'server.key') };
}
