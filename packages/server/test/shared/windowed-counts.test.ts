// Windowed counts: buckets are summed from the newest back to the window's start, a bucket
// counted again adds up, and buckets that left the window are dropped as counts are added.
import { expect, test } from 'vitest';
import { addTo, firstBucketSince, sumSince, type WindowedCounts } from '../../src/shared/windowed-counts.js';

test('sums, adds and drops the buckets of a sliding window', () => {
  const counts: WindowedCounts = [];
  expect(sumSince(counts, 0)).toBe(0);
  expect(firstBucketSince(counts, 0)).toBeUndefined();
  addTo(counts, 10, 2, 0);
  addTo(counts, 10, 3, 0);
  addTo(counts, 12, 1, 0);
  addTo(counts, 15, 4, 0);
  expect(counts).toEqual([10, 5, 12, 1, 15, 4]);
  expect(sumSince(counts, 9)).toBe(10);
  expect(sumSince(counts, 10)).toBe(5);
  expect(sumSince(counts, 15)).toBe(0);
  expect(firstBucketSince(counts, 10)).toBe(12);
  expect(firstBucketSince(counts, 15)).toBeUndefined();
  addTo(counts, 20, 1, 12);
  expect(counts).toEqual([15, 4, 20, 1]);
  addTo(counts, 40, 7, 30);
  expect(counts).toEqual([40, 7]);
});
