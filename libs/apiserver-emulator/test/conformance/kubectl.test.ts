import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Emulator } from '../../src/index.js';
import { CRD_FILE, KUBECTL_VERSIONS, kubectl, kubectlSkip, withEmulator } from '../support.js';

/**
 * Conformance with every kubectl CI has: the flows a user of this project runs (typed create,
 * scale, rollouts, Secrets, client-side then server-side apply, explain), each as a real cluster
 * answers them. One emulator, one namespace per version.
 */
describe('kubectl conformance', () => {
  let emu: Emulator;

  before(async () => {
    emu = await withEmulator();
  });
  after(() => emu.stop());

  for (const { label, bin, minor } of KUBECTL_VERSIONS) {
    const skip = kubectlSkip(bin);
    test(label, { skip }, async () => {
      const k = kubectl(emu, bin);
      const ns = `conf-${minor}`;
      const run = async (...args: string[]) => {
        const r = await k([...args, '-n', ns]);
        assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
        return r.stdout;
      };
      try {
        assert.equal((await k(['create', 'namespace', ns])).code, 0);
        // Typed create (protobuf from 1.32 on), then a rollout that completes.
        await run('create', 'deployment', 'web', '--image=busybox:1.36', '--replicas=2');
        assert.match(
          await run('rollout', 'status', 'deploy/web', '--timeout=20s'),
          /successfully rolled out/,
        );
        await run('scale', 'deploy/web', '--replicas=4');
        await run('rollout', 'status', 'deploy/web', '--timeout=20s');
        assert.match(await run('get', 'deploy', 'web'), /web\s+4\/4\s+4\s+4\s/);
        await run('set', 'image', 'deploy/web', 'busybox=busybox:1.37');
        await run('rollout', 'status', 'deploy/web', '--timeout=20s');
        assert.match(await run('rollout', 'history', 'deploy/web'), /^2\s/m);
        await run('rollout', 'undo', 'deploy/web');
        await run('rollout', 'status', 'deploy/web', '--timeout=20s');
        assert.equal(
          await run(
            'get',
            'deploy',
            'web',
            '-o',
            'jsonpath={.spec.template.spec.containers[0].image}',
          ),
          'busybox:1.36',
        );
        // A Secret from literals is stored base64-encoded in data.
        await run('create', 'secret', 'generic', 'creds', '--from-literal=password=s3cret');
        assert.equal(
          await run('get', 'secret', 'creds', '-o', 'jsonpath={.data.password}'),
          Buffer.from('s3cret').toString('base64'),
        );
        // Client-side apply, then the first server-side apply of a changed value.
        const file = join(k.dir, 'cm.yaml');
        const cm = (v: string) =>
          `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  level: "${v}"\n`;
        writeFileSync(file, cm('1'));
        await run('apply', '-f', file);
        writeFileSync(file, cm('2'));
        await run('apply', '--server-side', '-f', file);
        assert.equal(await run('get', 'cm', 'settings', '-o', 'jsonpath={.data.level}'), '2');
        // kubectl 1.20 explains from /openapi/v2, which carries no schemas here.
        if (minor >= 27) {
          assert.equal((await k(['apply', '-f', CRD_FILE])).code, 0);
          const explained = await k(['explain', 'backupjob.spec']);
          assert.equal(explained.code, 0, explained.stderr);
          assert.match(explained.stdout, /retentionDays/);
        }
      } finally {
        k.cleanup();
      }
    });
  }
});
