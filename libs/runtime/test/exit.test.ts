import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startProcess } from '#testing';

test('exitAfterFlush exits with the code once every line written before it reached the pipe', async () => {
  const exitModule = new URL('../src/exit.js', import.meta.url).href;
  // Several MiB: far more than a pipe holds, so most of it is still queued when the exit is asked.
  const script = [
    `import { exitAfterFlush } from '${exitModule}';`,
    `process.stdout.write('x'.repeat(200).concat('\\n').repeat(30000) + 'why it exits\\n');`,
    'exitAfterFlush(4);',
  ].join('\n');
  const child = startProcess({
    name: 'exiting',
    command: process.execPath,
    args: ['--input-type=module', '-e', script],
  });
  assert.equal(await child.waitForLine(/^why it exits$/), 'why it exits');
  assert.equal(await child.exited, 4);
  assert.equal(child.lines.length, 30001);
});
