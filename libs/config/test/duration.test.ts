import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { formatDuration, parseDuration } from '../src/duration.js';

describe('parseDuration (Go time.ParseDuration grammar)', () => {
  const cases: [string, number][] = [
    ['0', 0],
    ['500ms', 500],
    ['15s', 15_000],
    ['1.5s', 1500],
    ['10h', 36_000_000],
    ['2h45m', 9_900_000],
    ['1m30s', 90_000],
    ['250us', 0.25],
    ['250µs', 0.25],
    ['1000000ns', 1],
    ['.5s', 500],
    ['-2s', -2000],
    [' 3s ', 3000],
  ];
  for (const [text, ms] of cases) {
    test(`${JSON.stringify(text)} is ${ms} ms`, () => assert.equal(parseDuration(text), ms));
  }

  for (const text of ['', '15', 's', '15 s', '15x', '1h 30m', 'abc', '1.2.3s', '--1s', '5sec']) {
    test(`${JSON.stringify(text)} is not a duration`, () =>
      assert.equal(parseDuration(text), undefined));
  }
});

describe('formatDuration', () => {
  const cases: [number, string][] = [
    [0, '0s'],
    [5, '5ms'],
    [1500, '1.5s'],
    [15_000, '15s'],
    [90_000, '1m30s'],
    [36_000_000, '10h'],
    [1_000_000, '16m40s'],
  ];
  for (const [ms, text] of cases) {
    test(`${ms} ms prints as ${text} and parses back`, () => {
      assert.equal(formatDuration(ms), text);
      assert.equal(parseDuration(text), ms);
    });
  }
});
