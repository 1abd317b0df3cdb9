import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { gaugeFamiliesText } from '../src/index.js';

describe('gaugeFamiliesText', () => {
  test('HELP, TYPE and one line per sample, label values escaped', () => {
    const text = gaugeFamiliesText([
      {
        name: 'backupjob_ready',
        help: 'Ready\nor not',
        samples: [
          { labels: { namespace: 'ops', name: 'a' }, value: 1 },
          { labels: { namespace: 'ops', name: 'we"ird\\na\nme' }, value: 0 },
        ],
      },
    ]);
    assert.equal(
      text,
      [
        '# HELP backupjob_ready Ready\\nor not',
        '# TYPE backupjob_ready gauge',
        'backupjob_ready{namespace="ops",name="a"} 1',
        'backupjob_ready{namespace="ops",name="we\\"ird\\\\na\\nme"} 0',
        '',
      ].join('\n'),
    );
  });

  test('a family without samples is left out; nothing at all gives an empty text', () => {
    assert.equal(gaugeFamiliesText([{ name: 'x', help: 'h', samples: [] }]), '');
    const text = gaugeFamiliesText([
      { name: 'empty', help: 'h', samples: [] },
      { name: 'one', help: 'h', samples: [{ labels: {}, value: 1.5e9 }] },
    ]);
    assert.equal(text, '# HELP one h\n# TYPE one gauge\none 1500000000\n');
  });
});
