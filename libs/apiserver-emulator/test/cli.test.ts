import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { freePort, startProcess } from '#testing';

function post(
  port: number,
  path: string,
  body: unknown = {},
): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(payload),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            json: JSON.parse(text) as Record<string, unknown>,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

test('the CLI serves, writes a kubeconfig, takes runtime control requests and exits on SIGTERM', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'emu-cli-'));
  const port = await freePort();
  const kubeconfig = join(dir, 'emu.kubeconfig');
  const bin = new URL('../bin/apiserver.js', import.meta.url).pathname;
  const proc = startProcess({
    name: 'apiserver',
    command: process.execPath,
    args: [
      bin,
      '--port',
      String(port),
      '--kubeconfig',
      kubeconfig,
      '--clock',
      'manual',
      '--error',
      'code=503,count=1,verb=list,resource=secrets',
    ],
  });
  try {
    await proc.waitForLine(/serving http:\/\/127.0.0.1:\d+/, 20000);
    assert.match(readFileSync(kubeconfig, 'utf8'), new RegExp(`server: http://127.0.0.1:${port}`));
    const listed = await fetch(`http://127.0.0.1:${port}/api/v1/namespaces/default/secrets`);
    assert.equal(listed.status, 503, 'the --error fault answered');
    const before = (await post(port, '/__emulator/clock/advance', { ms: 0 })).json.now as string;
    const after = (await post(port, '/__emulator/clock/advance', { ms: 3600000 })).json
      .now as string;
    assert.equal(Date.parse(after) - Date.parse(before), 3600000);
    assert.deepEqual((await post(port, '/__emulator/faults/error', { code: 429, count: 1 })).json, {
      id: 2,
    });
    assert.equal((await fetch(`http://127.0.0.1:${port}/api/v1/namespaces`)).status, 429);
    assert.equal((await post(port, '/__emulator/nope')).status, 404);
  } finally {
    assert.equal(await proc.stop('SIGTERM'), 0);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('--help prints every option and exits 0 without serving', () => {
  const bin = new URL('../bin/apiserver.js', import.meta.url).pathname;
  const run = spawnSync(process.execPath, [bin, '--help'], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /^usage: npm run apiserver -- \[options\]/);
  for (const flag of ['--port', '--host', '--kubeconfig', '--advertise-url', '--rbac', '--error'])
    assert.ok(run.stdout.includes(`  ${flag} `), `${flag} is listed`);
  const unknown = spawnSync(process.execPath, [bin, '--bogus'], { encoding: 'utf8' });
  assert.equal(unknown.status, 2);
  assert.match(unknown.stderr, /Unknown option '--bogus'[\s\S]*usage:/);
});

test('--advertise-url is the server the kubeconfig names, while it listens on --host', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'emu-cli-'));
  const port = await freePort();
  const kubeconfig = join(dir, 'emu.kubeconfig');
  const advertised = `http://localhost:${port}`;
  const proc = startProcess({
    name: 'apiserver',
    command: process.execPath,
    args: [new URL('../bin/apiserver.js', import.meta.url).pathname, '--host', '0.0.0.0'].concat([
      '--port',
      String(port),
      '--kubeconfig',
      kubeconfig,
      '--advertise-url',
      advertised,
    ]),
  });
  try {
    await proc.waitForLine(/serving http:\/\/localhost:\d+ \(listening on 0\.0\.0\.0:\d+\)/, 20000);
    assert.match(readFileSync(kubeconfig, 'utf8'), new RegExp(`server: ${advertised}\\n`));
    assert.equal((await fetch(`${advertised}/version`)).status, 200);
  } finally {
    assert.equal(await proc.stop('SIGTERM'), 0);
    rmSync(dir, { recursive: true, force: true });
  }
});
