import { writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/**
 * Writes `<dir>/kubeconfig` for a test's plain-HTTP server with a token user, and returns its
 * path. insecure-skip-tls-verify is set: client-node refuses plain HTTP without it, and it is a
 * TLS option, with which client-node builds a dispatcher per request.
 */
export function writeKubeconfigFor(server: Server, dir: string): string {
  const path = join(dir, 'kubeconfig');
  const { port } = server.address() as AddressInfo;
  writeFileSync(
    path,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'c',
          cluster: { server: `http://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true },
        },
      ],
      users: [{ name: 'u', user: { token: 't' } }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    }),
  );
  return path;
}
