import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { validateCel } from '../src/crd/cel.js';
import { applyDefaults, prune, validate, type JSONSchemaProps } from '../src/crd/schema.js';
import { mergePatch, strategicMergePatch } from '../src/patch.js';
import { parseLabelSelector } from '../src/selectors.js';
import { humanDuration } from '../src/table.js';

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['size'],
      properties: {
        size: {
          type: 'integer',
          minimum: 1,
          'x-kubernetes-validations': [{ rule: 'self >= oldSelf', message: 'size may only grow' }],
        },
        mode: { type: 'string', enum: ['a', 'b'], default: 'a' },
        port: { 'x-kubernetes-int-or-string': true },
        extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
      },
    },
  },
};

// CRD docs #specifying-a-structural-schema, #field-pruning, #defaulting, #validation, #validation-rules
describe('structural schema', () => {
  test('prunes unknown fields except under preserve-unknown-fields and reports their paths', () => {
    const obj = {
      apiVersion: 'x/v1',
      kind: 'X',
      metadata: { name: 'n', bogus: 1 },
      spec: { size: 1, nope: true, extra: { kept: 1 } },
      top: 1,
    };
    assert.deepEqual(prune(obj, schema).sort(), ['metadata.bogus', 'spec.nope', 'top']);
    assert.deepEqual(obj.spec, { size: 1, extra: { kept: 1 } });
  });

  test('defaults fill missing fields; validation names each field', () => {
    const obj = { spec: { size: 0, port: 'http', tags: ['x', 'x'] } } as Record<string, unknown>;
    applyDefaults(obj, schema);
    assert.equal((obj.spec as { mode: string }).mode, 'a');
    const errors = validate(obj, schema).map((e) => `${e.field} ${e.type}`);
    assert.deepEqual(errors, ['spec.size Invalid', 'spec.tags[1] Duplicate']);
    assert.deepEqual(
      validate({ spec: { size: 'big' } }, schema).map((e) => e.detail),
      ['spec.size in body must be of type integer: "string"'],
    );
  });

  test('transition rules compare with oldSelf only on update', () => {
    assert.deepEqual(validateCel({ spec: { size: 1 } }, schema, undefined), []);
    assert.deepEqual(validateCel({ spec: { size: 3 } }, schema, { spec: { size: 2 } }), []);
    const errors = validateCel({ spec: { size: 1 } }, schema, { spec: { size: 2 } });
    assert.equal(errors[0]?.field, 'spec.size');
    assert.equal(errors[0]?.detail, 'size may only grow');
  });
});

describe('patches, selectors, durations', () => {
  // RFC 7386
  test('merge patch deletes with null and replaces lists', () => {
    assert.deepEqual(
      mergePatch({ a: 1, b: { c: 1, d: 2 }, l: [1, 2] }, { a: null, b: { c: 3 }, l: [3] }),
      { b: { c: 3, d: 2 }, l: [3] },
    );
  });

  // docs/tasks/manage-kubernetes-objects/update-api-object-kubectl-patch/
  test('strategic merge patch merges by key, honours $patch: delete and merges finalizers', () => {
    const live = {
      spec: {
        containers: [
          { name: 'a', image: '1' },
          { name: 'b', image: '1' },
        ],
      },
      metadata: { finalizers: ['x'] },
    };
    const out = strategicMergePatch(live, {
      spec: {
        containers: [
          { name: 'a', $patch: 'delete' },
          { name: 'c', image: '2' },
        ],
      },
      metadata: { finalizers: ['y'] },
    });
    assert.deepEqual(out, {
      spec: {
        containers: [
          { name: 'b', image: '1' },
          { name: 'c', image: '2' },
        ],
      },
      metadata: { finalizers: ['x', 'y'] },
    });
  });

  test('label selector operators', () => {
    const m = parseLabelSelector('env in (prod,staging),!legacy,tier!=db')!;
    assert.equal(m({ env: 'prod', tier: 'web' }), true);
    assert.equal(m({ env: 'prod', tier: 'db' }), false);
    assert.equal(m({ env: 'dev' }), false);
    assert.equal(m({ env: 'prod', legacy: 'y' }), false);
  });

  // k8s.io/apimachinery/pkg/util/duration.HumanDuration (AGE column)
  test('human durations match kubectl AGE formatting', () => {
    assert.deepEqual(
      [5e3, 125e3, 3 * 3600e3 + 60e3, 50 * 3600e3, 400 * 86400e3].map(humanDuration),
      ['5s', '2m5s', '3h1m', '2d2h', '400d'],
    );
  });
});
