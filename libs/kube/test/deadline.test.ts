import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, mock, test } from 'node:test';
import { deadline } from '../src/deadline.js';

describe('deadline', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout'] }));
  afterEach(() => mock.timers.reset());

  test('aborts with a TimeoutError once the limit has passed', () => {
    const limit = deadline(undefined, 1_000);
    mock.timers.tick(999);
    assert.equal(limit.signal?.aborted, false);
    mock.timers.tick(1);
    assert.equal(limit.signal?.aborted, true);
    assert.equal((limit.signal?.reason as DOMException).name, 'TimeoutError');
  });

  test('a request that ended before the limit is never aborted: its timer is gone', () => {
    const limit = deadline(undefined, 1_000);
    limit.done();
    mock.timers.tick(10_000);
    assert.equal(limit.signal?.aborted, false);
  });

  test("follows the caller's signal with its reason, also when it was aborted already", () => {
    const caller = new AbortController();
    const limit = deadline(caller.signal, 1_000);
    caller.abort(new Error('shutting down'));
    assert.equal((limit.signal?.reason as Error).message, 'shutting down');
    const late = deadline(caller.signal, 1_000);
    assert.equal((late.signal?.reason as Error).message, 'shutting down');
  });

  test("once done, it no longer listens to the caller's signal", () => {
    const caller = new AbortController();
    const limit = deadline(caller.signal, 1_000);
    limit.done();
    caller.abort();
    assert.equal(limit.signal?.aborted, false);
  });

  test("without a limit it is the caller's signal itself", () => {
    const caller = new AbortController();
    assert.equal(deadline(caller.signal, undefined).signal, caller.signal);
    assert.equal(deadline(undefined, 0).signal, undefined);
  });
});
