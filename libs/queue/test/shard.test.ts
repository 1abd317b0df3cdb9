import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { queueDefaults, resolveQueueOptions, shardKeys, shardOf } from '../src/index.js';

describe('shardOf', () => {
  test('is FNV-1a over the UTF-8 bytes (published test vectors), modulo the shard count', () => {
    // Vectors from the FNV reference (http://www.isthe.com/chongo/tech/comp/fnv/).
    assert.equal(shardOf('a', 2 ** 32), 0xe40c292c);
    assert.equal(shardOf('foobar', 2 ** 32), 0xbf9cf968);
    assert.equal(shardOf('foobar', 16), 0xbf9cf968 % 16);
  });

  test('spreads namespace/name keys over every shard', () => {
    const counts = new Array<number>(16).fill(0);
    for (let i = 0; i < 1600; i++) counts[shardOf(`ns-${i % 7}/obj-${i}`, 16)]! += 1;
    assert.ok(
      counts.every((n) => n > 50),
      `uneven: ${counts.join(',')}`,
    );
  });
});

describe('shardKeys', () => {
  test('all keys of a shard carry the same hash tag, different per shard', () => {
    const tags = (shard: number) =>
      new Set(
        Object.values(shardKeys('wq', 'backupjob', shard)).map((k) => /\{[^}]*\}/.exec(k)?.[0]),
      );
    assert.deepEqual([...tags(3)], ['{backupjob:3}']);
    assert.notDeepEqual([...tags(3)], [...tags(4)]);
  });
});

describe('resolveQueueOptions', () => {
  const connection = { url: 'redis://127.0.0.1:6379' };

  test('defaults follow client-go: backoff 5 ms doubling to 1000 s', () => {
    const options = resolveQueueOptions({ name: 'q', connection });
    assert.deepEqual(options.backoff, { baseMs: 5, maxMs: 1_000_000 });
    assert.equal(options.controller, 'q');
    assert.equal(options.shards, queueDefaults.shards);
  });

  test('bad values are rejected with the option named', () => {
    assert.throws(() => resolveQueueOptions({ name: 'q', connection, shards: 0 }), /option shards/);
    assert.throws(() => resolveQueueOptions({ name: 'a{b}', connection }), /option name/);
    assert.throws(
      () => resolveQueueOptions({ name: 'q', connection, prefix: '' }),
      /option prefix/,
    );
    assert.throws(
      () => resolveQueueOptions({ name: 'q', connection, backoff: { baseMs: 10, maxMs: 5 } }),
      /option backoff.maxMs/,
    );
    assert.throws(() => resolveQueueOptions({ name: 'q', connection: {} }), /option connection/);
  });
});
