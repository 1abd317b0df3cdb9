import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { headerOf } from '../src/stack-traces.js';

describe('the first line of a stack', () => {
  test("names a Node error's code as Node does", () => {
    let thrown: unknown;
    try {
      Buffer.alloc(-1);
    } catch (err) {
      thrown = err;
    }
    const error = thrown as Error;
    // Node's own first line, written before any override is set.
    assert.equal(headerOf(error), error.stack!.split('\n')[0]);
    assert.match(headerOf(error), /^RangeError \[ERR_OUT_OF_RANGE\]: The value of "size"/);
  });

  test('leaves other errors as Error.prototype.toString writes them', () => {
    const system = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), {
      code: 'ECONNREFUSED',
    });
    assert.equal(headerOf(system), 'Error: connect ECONNREFUSED 127.0.0.1:1');
    assert.equal(headerOf(new TypeError('plain')), 'TypeError: plain');
    const named = Object.assign(new Error('m'), { name: 'Custom [ERR_X]', code: 'ERR_X' });
    assert.equal(headerOf(named), 'Custom [ERR_X]: m');
  });

  test('survives an error whose name cannot be read', () => {
    const hostile = new Error('m');
    Object.defineProperty(hostile, 'name', {
      get() {
        throw new Error('no');
      },
    });
    assert.equal(headerOf(hostile), '<error>');
  });
});
