import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generationChanged, resourceVersionChanged } from '../src/predicate.js';
import type { KubeObject, ObjectMeta } from '../src/types.js';

const base: ObjectMeta = {
  name: 'daily',
  resourceVersion: '10',
  generation: 3,
  labels: { a: 'b' },
};

function obj(meta: Partial<ObjectMeta> = {}): KubeObject {
  return { metadata: { ...base, ...meta } };
}

describe('single predicates', () => {
  test('generationChanged compares generations only', () => {
    assert.equal(generationChanged(obj(), obj({ labels: {} })), false);
    assert.equal(generationChanged(obj(), obj({ generation: 9 })), true);
  });

  test('resourceVersionChanged tells resyncs from real updates', () => {
    assert.equal(resourceVersionChanged(obj(), obj()), false);
    assert.equal(resourceVersionChanged(obj(), obj({ resourceVersion: '11' })), true);
  });
});
