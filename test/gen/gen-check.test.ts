import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { staleFiles } from '#tools/gen/main';
import { defaultSources, generatedFiles } from '#tools/gen/outputs';

const genMain = fileURLToPath(new URL('../../tools/gen/main.js', import.meta.url));

/** A scratch tree holding the committed generated files, so the check can be run against edits. */
function copyOfGeneratedFiles(): string {
  const root = mkdtempSync(join(tmpdir(), 'gen-check-'));
  for (const f of generatedFiles()) {
    cpSync(f.path, join(root, f.path), { recursive: true });
  }
  return root;
}

describe('gen:check', () => {
  test('the committed generated files match the schema', () => {
    assert.deepEqual(staleFiles(process.cwd()), []);
  });

  test('a schema change without gen makes every derived file stale', () => {
    const changedSpec = {
      ...defaultSources.specSchema,
      properties: {
        ...defaultSources.specSchema.properties,
        compression: { type: 'string' as const },
      },
    };
    const changed = {
      ...defaultSources,
      specSchema: changedSpec,
      backupJobSchema: {
        ...defaultSources.backupJobSchema,
        properties: { ...defaultSources.backupJobSchema.properties, spec: changedSpec },
      },
    };
    assert.deepEqual(staleFiles(process.cwd(), generatedFiles(changed)).sort(), [
      'config/crd/bases/ops.example.com_backupjobs.yaml',
      'docs/api.md',
      'helm/backupjob-operator/crds/ops.example.com_backupjobs.yaml',
      'libs/api/src/generated/backupjob.ts',
    ]);
  });

  test('the CLI fails naming the stale file, and passes once regenerated', () => {
    const root = copyOfGeneratedFiles();
    try {
      const crd = join(root, 'config/crd/bases/ops.example.com_backupjobs.yaml');
      writeFileSync(crd, '# edited by hand\n');
      const failed = spawnSync(process.execPath, [genMain, '--check'], {
        cwd: root,
        encoding: 'utf8',
      });
      assert.equal(failed.status, 1);
      assert.match(
        failed.stderr,
        /stale generated file: config\/crd\/bases\/ops\.example\.com_backupjobs\.yaml/,
      );

      const gen = spawnSync(process.execPath, [genMain], { cwd: root, encoding: 'utf8' });
      assert.equal(gen.status, 0, gen.stderr);
      const passed = spawnSync(process.execPath, [genMain, '--check'], {
        cwd: root,
        encoding: 'utf8',
      });
      assert.equal(passed.status, 0, passed.stderr);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
