import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TlsMaterial {
  key: string;
  cert: string;
}

let cached: TlsMaterial | undefined;

/**
 * A self-signed certificate for 127.0.0.1/localhost, made once per process with the openssl CLI
 * (node:crypto cannot issue X.509 certificates). Clients use insecure-skip-tls-verify.
 */
export function selfSignedCertificate(): TlsMaterial {
  if (cached) return cached;
  const dir = mkdtempSync(join(tmpdir(), 'apiserver-emulator-tls-'));
  try {
    const key = join(dir, 'key.pem');
    const cert = join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '365',
        '-subj',
        '/CN=apiserver-emulator',
        '-addext',
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
      ],
      { stdio: 'ignore' },
    );
    cached = { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') };
    return cached;
  } catch (e) {
    throw new Error(
      `could not create a TLS certificate with the openssl CLI (needed for tls: true): ${(e as Error).message}`,
      { cause: e },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
