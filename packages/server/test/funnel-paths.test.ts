// One user's way through a funnel: modes, the furthest-then-earliest entry, same-time events.
import { expect, test } from 'vitest';
import { bestPath, pathOf } from '../src/reporting/funnel-paths.js';

const A = 1;
const B = 2;
const C = 4;
const user = (events: [number, number][]) => ({ times: events.map(([t]) => t), masks: events.map(([, m]) => m), entries: events.flatMap(([, m], i) => (m & A ? [i] : [])) });

test('ordered: later steps after the previous one within the window, other events between allowed', () => {
  const events = user([[0, A], [5, 0], [10, C], [20, B], [30, C]]);
  expect(pathOf(events, 0, 3, 100, 'ordered').completedAt).toEqual([0, 20, 30]);
  expect(pathOf(events, 0, 3, 25, 'ordered').completedAt).toEqual([0, 20]);
});

test('sequential: no other event between two steps', () => {
  expect(pathOf(user([[0, A], [5, 0], [10, B]]), 0, 2, 100, 'sequential').completedAt).toEqual([0]);
  expect(pathOf(user([[0, A], [10, B], [11, C]]), 0, 3, 100, 'sequential').completedAt).toEqual([0, 10, 11]);
});

test('unordered: every step within the window from the entry, in any order', () => {
  expect(pathOf(user([[0, A], [10, C], [20, B]]), 0, 3, 100, 'unordered').completedAt).toEqual([0, 20, 20]);
  expect(pathOf(user([[0, A], [10, C]]), 0, 3, 100, 'unordered').completedAt).toEqual([0]);
});

test('the entry reaching furthest wins, the earliest among equals', () => {
  // The first entry times out before B; the second reaches C.
  const events = user([[0, A], [50, A], [120, B], [130, C]]);
  expect(bestPath(events, events.entries, 3, 100, 'ordered')).toEqual({ entry: 1, completedAt: [50, 120, 130] });
  const equal = user([[0, A], [10, A], [20, B]]);
  expect(bestPath(equal, equal.entries, 2, 100, 'ordered')!.entry).toBe(0);
});

test('one event matching two steps counts once; events of the same time count in step order', () => {
  expect(pathOf(user([[0, A | B]]), 0, 2, 100, 'ordered').completedAt).toEqual([0]);
  expect(pathOf(user([[0, A], [0, B]]), 0, 2, 100, 'ordered').completedAt).toEqual([0, 0]);
});
