import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCommand } from '../src/command.js';

test('startOperatorSystem run where config/ is missing throws before it starts an emulator or a Redis, and its process exits', async () => {
  const cwd = mkdtempSync(join(tmpdir(), 'no-config-'));
  try {
    // A listening emulator or a Redis child left behind would keep this process from exiting.
    const run = await runCommand(
      'sh',
      [
        '-c',
        `cd "$0" && exec "$1" --input-type=module -e "$2"`,
        cwd,
        process.execPath,
        [
          `import { startOperatorSystem } from ${JSON.stringify(new URL('../src/operator-system.js', import.meta.url).href)};`,
          'await startOperatorSystem({ watchers: 0, workers: 0 }).then(',
          "  () => console.log('started'),",
          '  (err) => console.log(err.code),',
          ');',
        ].join('\n'),
      ],
      { timeoutMs: 20_000 },
    );
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout.trim(), 'ENOENT');
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
});
