import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { gaugeFamiliesText, gaugeFamilyChunks, type GaugeSample } from '../src/index.js';

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

describe('gaugeFamilyChunks', () => {
  test('a large family comes in newline-terminated chunks of at most 1000 lines, made as they are read', () => {
    let made = 0;
    function* samples(): Generator<GaugeSample> {
      for (let i = 0; i < 2500; i++) {
        made++;
        yield { labels: { name: `bj-${i}` }, value: i };
      }
    }
    const chunks = gaugeFamilyChunks([{ name: 'big', help: 'h', samples: samples() }]);
    const first = chunks.next();
    assert.equal(first.done, false);
    // The first chunk is out before the family has been read to its end.
    assert.ok(made < 2500, `${made} samples made for the first chunk`);
    const all = [first.value as string, ...chunks];
    assert.deepEqual(
      all.map((c) => c.split('\n').length - 1),
      [1000, 1000, 502],
    );
    assert.ok(all.every((c) => c.endsWith('\n')));
    const text = all.join('');
    assert.ok(text.startsWith('# HELP big h\n# TYPE big gauge\nbig{name="bj-0"} 0\n'));
    assert.ok(text.endsWith('big{name="bj-2499"} 2499\n'));
  });
});
