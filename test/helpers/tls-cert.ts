/** A self-signed certificate for localhost and 127.0.0.1, made by openssl, for HTTPS tests. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface TestCertificate {
  certPath: string;
  keyPath: string;
  /** The certificate itself: a client trusts it as its CA. */
  cert: Buffer;
}

/** Writes cert.pem and key.pem into `dir` (an EC key: fast to make). */
export function makeCertificate(dir: string): TestCertificate {
  const certPath = join(dir, 'cert.pem');
  const keyPath = join(dir, 'key.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
    '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
    '-keyout', keyPath, '-out', certPath,
  ], { stdio: 'ignore' });
  return { certPath, keyPath, cert: readFileSync(certPath) };
}
