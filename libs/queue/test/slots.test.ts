import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Slots } from '../src/slots.js';

/** Lets the promise jobs queued so far run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Starts a wait for a slot of `shard` and records when it is granted. */
function waitFor(slots: Slots, shard: number, granted: number[]): Promise<boolean> {
  return slots.acquire(shard).then((ok) => {
    if (ok) granted.push(shard);
    return ok;
  });
}

describe('Slots: one budget over shards, shared max-min', () => {
  test('a shard alone keeps every slot it frees, with or without its own lane waiting', async () => {
    const slots = new Slots(2);
    assert.equal(await slots.acquire(0), true);
    assert.equal(await slots.acquire(0), true);
    assert.equal(slots.keeps(0), true, 'nobody waits');
    void slots.acquire(0);
    assert.equal(slots.keeps(0), true, 'only its own lane waits');
  });

  test('at or below its share a shard keeps its slot although a shard holding fewer waits', async () => {
    // 10 slots; shards 0-7 hold one each and shards 0 and 1 a second; shard 8 wakes up holding
    // none: 9 shards want work, a share of 1 each.
    const slots = new Slots(10);
    for (let shard = 0; shard < 8; shard++) assert.equal(await slots.acquire(shard), true);
    assert.equal(await slots.acquire(0), true);
    assert.equal(await slots.acquire(1), true);
    const granted: number[] = [];
    for (let shard = 0; shard <= 8; shard++) void waitFor(slots, shard, granted);
    assert.equal(slots.keeps(5), true, 'one slot is within the share');
    assert.equal(slots.keeps(0), false, 'a second slot is above it');
    slots.release(0);
    await settle();
    assert.deepEqual(granted, [8], 'the slot above the share goes to the shard holding none');
  });

  test('a slot given back goes to the waiting shard holding the fewest, first come among equals', async () => {
    const slots = new Slots(3);
    await slots.acquire(0);
    await slots.acquire(0);
    await slots.acquire(1);
    const granted: number[] = [];
    for (const shard of [1, 0, 2, 3]) void waitFor(slots, shard, granted);
    slots.release(0);
    await settle();
    assert.deepEqual(
      granted,
      [2],
      'shard 2 holds none: it goes before shards 1 and 0, which came first',
    );
    slots.release(1);
    await settle();
    assert.deepEqual(granted, [2, 1], 'shard 1 now holds none too, and came before shard 3');
    slots.release(2);
    await settle();
    assert.deepEqual(granted, [2, 1, 3]);
  });

  /** Slots taken by `holders` (one per entry), then `waiting` waits; `finishing` must hand on. */
  async function handsOn(size: number, holders: number[], waiting: number, why: string) {
    const slots = new Slots(size);
    for (const shard of holders) await slots.acquire(shard);
    const granted: number[] = [];
    void waitFor(slots, waiting, granted);
    const finishing = holders[0] as number;
    assert.equal(slots.keeps(finishing), false, why);
    slots.release(finishing);
    await settle();
    assert.deepEqual(granted, [waiting]);
    return slots;
  }

  test('a shard that wakes up is not starved by shards that keep their slots', async () => {
    const slots = await handsOn(2, [0, 0], 1, 'shard 0 holds 2 against a share of 1');
    assert.equal(slots.keeps(0), true, 'now at its share');
    assert.equal(slots.keeps(1), true);
  });

  test('more shards than slots: a finish hands its slot on to a shard that holds none', async () => {
    await handsOn(2, [0, 1], 2, 'the share rounds down to 0');
  });

  test('a waiter that holds more than the finishing shard does not take its slot', async () => {
    const slots = new Slots(3);
    await slots.acquire(0);
    await slots.acquire(0);
    await slots.acquire(1);
    void slots.acquire(0);
    assert.equal(slots.keeps(1), true, 'shard 0, waiting, already holds more');
  });

  test('close refuses waiting and later acquires; releases still count', async () => {
    const slots = new Slots(1);
    await slots.acquire(0);
    const waiting = slots.acquire(1);
    slots.close();
    assert.equal(await waiting, false);
    assert.equal(await slots.acquire(1), false);
    slots.release(0);
  });
});
