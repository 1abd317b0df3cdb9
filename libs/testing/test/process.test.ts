import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startProcess } from '../src/process.js';

test('waitForLine sees the last lines of a process that exits right after writing them', async () => {
  // Several MiB through the pipe, exiting once they are handed to the OS: the parent hears of the
  // exit long before it has read them all.
  const script = `process.stdout.write('x'.repeat(200).concat('\\n').repeat(30000) + 'last line\\n', () => process.exit(3));`;
  const child = startProcess({ name: 'writer', command: process.execPath, args: ['-e', script] });
  assert.equal(await child.waitForLine(/^last line$/), 'last line');
  assert.equal(await child.exited, 3);
});
