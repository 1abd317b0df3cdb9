import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { imageAllowed, imageMatches, parseImage } from '../src/images.js';

describe('parseImage', () => {
  test('spells out Docker Hub and splits tag and digest', () => {
    assert.deepEqual(parseImage('mysql'), {
      repository: 'docker.io/library/mysql',
      tag: undefined,
      digest: undefined,
    });
    assert.deepEqual(parseImage('localhost:5000/backup:1.2@sha256:ab'), {
      repository: 'localhost:5000/backup',
      tag: '1.2',
      digest: 'sha256:ab',
    });
  });
});

describe('imageMatches', () => {
  const digest = `sha256:${'a'.repeat(64)}`;
  const cases: [string, string, boolean][] = [
    ['registry.example.com/backup:1.0', 'registry.example.com/backup', true],
    ['registry.example.com/backup@' + digest, 'registry.example.com/backup', true],
    ['registry.example.com/backup-evil:1.0', 'registry.example.com/backup', false],
    ['registry.example.com/backup/x:1', 'registry.example.com/backup', false],
    ['registry.example.com/backup/x:1', 'registry.example.com/backup/*', true],
    ['registry.example.com/backupx/x:1', 'registry.example.com/backup/*', false],
    ['evil.example.com/registry.example.com/backup:1', 'registry.example.com/backup', false],
    ['registry.example.com/backup:1.0', 'registry.example.com/backup:1.0', true],
    ['registry.example.com/backup:1.1', 'registry.example.com/backup:1.0', false],
    // A digest decides what runs; a tag pattern cannot vouch for it.
    ['registry.example.com/backup:1.0@' + digest, 'registry.example.com/backup:1.0', false],
    ['registry.example.com/backup@' + digest, 'registry.example.com/backup@' + digest, true],
    ['registry.example.com/backup:1.0', 'registry.example.com/backup@' + digest, false],
    ['mysql:8', 'docker.io/library/mysql', true],
    ['docker.io/library/mysql:8', 'mysql', true],
  ];
  for (const [image, pattern, expected] of cases) {
    test(`${image} ${expected ? 'matches' : 'does not match'} ${pattern}`, () => {
      assert.equal(imageMatches(image, pattern), expected);
    });
  }
});

test('imageAllowed: the default image always, others only through the list', () => {
  assert.equal(imageAllowed('r.example.com/b:1', 'r.example.com/b:1', []), true);
  assert.equal(imageAllowed('r.example.com/b:2', 'r.example.com/b:1', []), false);
  assert.equal(imageAllowed('r.example.com/b:2', 'r.example.com/b:1', ['r.example.com/b']), true);
});
