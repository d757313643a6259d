// Report ranges, buckets and zone offsets across DST changes.
import { expect, test } from 'vitest';
import { bucketLabels, extendBack, localDateLabel, localMidnight, offsetsBetween, reportRange } from '../../src/model/time.js';

const HOUR = 3_600_000;

test('a range covers local midnight to local midnight, 23 and 25 hour days included', () => {
  const spring = reportRange('Europe/Berlin', '20260329', '20260329');
  expect(spring.startMs).toBe(Date.UTC(2026, 2, 28, 23));
  expect(spring.endMs - spring.startMs).toBe(23 * HOUR);
  const autumn = reportRange('Europe/Berlin', '20261025', '20261025');
  expect(autumn.endMs - autumn.startMs).toBe(25 * HOUR);
  expect(localMidnight('America/New_York', { year: 2026, month: 11, day: 1 })).toBe(Date.UTC(2026, 10, 1, 4));
  expect(localDateLabel('Asia/Tokyo', Date.UTC(2026, 10, 1, 16))).toBe('2026-11-02');
});

test('offsets change at the DST instant, to the minute', () => {
  expect(offsetsBetween('Europe/Berlin', Date.UTC(2026, 9, 20), Date.UTC(2026, 9, 30))).toEqual([
    { fromMs: Date.UTC(2026, 9, 20), offsetMs: 2 * HOUR },
    { fromMs: Date.UTC(2026, 9, 25, 1), offsetMs: HOUR },
  ]);
  expect(offsetsBetween('UTC', 0, 10 * 86_400_000)).toEqual([{ fromMs: 0, offsetMs: 0 }]);
});

test('bucket labels: Monday weeks and months that start before the range; rolling windows reach back', () => {
  const range = reportRange('UTC', '20261101', '20261203');
  expect(bucketLabels(range, 'week').slice(0, 2)).toEqual(['2026-10-26', '2026-11-02']);
  expect(bucketLabels(range, 'month')).toEqual(['2026-11-01', '2026-12-01']);
  expect(bucketLabels(reportRange('UTC', '20261101', '20261101'), 'hour')).toHaveLength(24);
  expect(extendBack('UTC', range, 'month', 2).start).toEqual({ year: 2026, month: 9, day: 1 });
  expect(extendBack('UTC', range, 'day', 6).start).toEqual({ year: 2026, month: 10, day: 26 });
  expect(extendBack('UTC', reportRange('UTC', '20260115', '20260120'), 'month', 1).start).toEqual({ year: 2025, month: 12, day: 1 });
});
