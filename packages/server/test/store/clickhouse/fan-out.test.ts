// The split of a load's chunks into one stream per shard (fan-out.ts): each shard's send reads
// its items in order, the source is read only as fast as the sends take it, and a failure of
// one send ends the others and is the answer, without waiting forever on the source.
import { expect, test } from 'vitest';
import { fanOut } from '../../../src/store/clickhouse/fan-out.js';

const chunks = (count: number, size: number) => Array.from({ length: count }, (_, c) => Array.from({ length: size }, (_, i) => c * size + i));

test('each shard reads its items, in order, whatever the chunks held', async () => {
  const received: number[][] = [[], [], []];
  const sends = received.map((into) => async (items: AsyncIterable<number[]>) => {
    for await (const chunk of items) into.push(...chunk);
  });
  await fanOut(chunks(50, 7), (n) => n % 3, sends);
  const all = chunks(50, 7).flat();
  expect(received).toEqual([0, 1, 2].map((shard) => all.filter((n) => n % 3 === shard)));
});

test('the source is read as the slowest send takes it, a few chunks ahead at most', async () => {
  let read = 0;
  let taken = 0;
  let mostAhead = 0;
  async function* source() {
    for (const chunk of chunks(100, 4)) {
      read++;
      mostAhead = Math.max(mostAhead, read - taken);
      yield chunk;
    }
  }
  const slow = async (items: AsyncIterable<number[]>) => {
    for await (const _ of items) {
      taken++;
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  };
  const fast = async (items: AsyncIterable<number[]>) => {
    for await (const _ of items);
  };
  await fanOut(source(), (n) => n % 2, [slow, fast]);
  expect(read).toBe(100);
  expect(mostAhead).toBeLessThanOrEqual(6);
});

test('a send that fails ends the others and is the answer; a source that never ends is left', async () => {
  async function* endless() {
    for (let c = 0; ; c++) yield [c * 2, c * 2 + 1];
  }
  const failure = new Error('shard 2 refused the insert');
  let otherEnded = false;
  const reader = async (items: AsyncIterable<number[]>) => {
    try {
      for await (const _ of items);
    } finally {
      otherEnded = true;
    }
  };
  const failing = async (items: AsyncIterable<number[]>) => {
    let seen = 0;
    for await (const _ of items) if (++seen === 3) throw failure;
  };
  await expect(fanOut(endless(), (n) => n % 2, [reader, failing])).rejects.toBe(failure);
  expect(otherEnded).toBe(true);
});
