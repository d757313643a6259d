// Counts in time buckets, kept as one array of (bucket number, count) pairs, bucket numbers
// ascending, of which only the buckets inside a sliding window are kept. Pairs in one array,
// not an array of buckets and one of counts: the throttle reads the counts of two ids per
// event, and each array is one more place in memory to wait for.

/** `[bucket, count, bucket, count, ...]`. */
export type WindowedCounts = number[];

/** Sum of the buckets newer than `oldest`. */
export function sumSince(counts: WindowedCounts, oldest: number): number {
  let total = 0;
  for (let i = counts.length - 2; i >= 0 && counts[i]! > oldest; i -= 2) total += counts[i + 1]!;
  return total;
}

/** Adds `count` to bucket `bucket` and drops the buckets at or before `oldest`. */
export function addTo(counts: WindowedCounts, bucket: number, count: number, oldest: number): void {
  const last = counts.length - 2;
  if (last >= 0 && counts[last] === bucket) counts[last + 1]! += count;
  else counts.push(bucket, count);
  let expired = 0;
  while (expired < counts.length && counts[expired]! <= oldest) expired += 2;
  if (expired > 0) counts.splice(0, expired);
}

/** The first bucket newer than `oldest` (the first to leave the window), or undefined. */
export function firstBucketSince(counts: WindowedCounts, oldest: number): number | undefined {
  for (let i = 0; i < counts.length; i += 2) if (counts[i]! > oldest) return counts[i];
  return undefined;
}
