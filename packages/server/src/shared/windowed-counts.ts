// Counts in time buckets, kept as two parallel arrays (bucket numbers ascending, counts),
// of which only the buckets inside a sliding window are kept.

/** Sum of the buckets newer than `oldest`. */
export function sumSince(buckets: number[], counts: number[], oldest: number): number {
  let total = 0;
  for (let i = buckets.length - 1; i >= 0 && buckets[i]! > oldest; i--) total += counts[i]!;
  return total;
}

/** Adds `count` to bucket `bucket` and drops the buckets at or before `oldest`. */
export function addTo(buckets: number[], counts: number[], bucket: number, count: number, oldest: number): void {
  const last = buckets.length - 1;
  if (last >= 0 && buckets[last] === bucket) counts[last]! += count;
  else {
    buckets.push(bucket);
    counts.push(count);
  }
  let expired = 0;
  while (expired < buckets.length && buckets[expired]! <= oldest) expired++;
  if (expired > 0) {
    buckets.splice(0, expired);
    counts.splice(0, expired);
  }
}
