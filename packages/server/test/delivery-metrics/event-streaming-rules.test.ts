// The streaming rules apart from HTTP and storage: what an attempt's answer leads to, the
// backoff, batches, the metrics window and the concurrency limit of the metrics endpoint.
import { expect, test } from 'vitest';
import { backoffMs, inBatches, judge } from '../../src/delivery-metrics/delivery.js';
import { MetricsLimits } from '../../src/delivery-metrics/limits.js';
import { platformTime, requestWindow } from '../../src/delivery-metrics/metrics.js';

const policy = { firstRetryMs: 10_000, maxRetryMs: 60_000, expiryMs: 3_600_000 };

test('2xx delivers, a 4xx other than 429 discards, everything else is retried until the expiry', () => {
  expect(judge(policy, { status: 204 }, 1, 0, 100_000)).toEqual({ outcome: 'delivered' });
  expect(judge(policy, { status: 400 }, 1, 0, 100_000)).toEqual({ outcome: 'discarded' });
  expect(judge(policy, { status: 413 }, 3, 0, 100_000)).toEqual({ outcome: 'discarded' });
  expect(judge(policy, { status: 429 }, 1, 0, 100_000)).toEqual({ outcome: 'retry', nextAttemptAt: 10_000 });
  expect(judge(policy, { status: 503 }, 2, 5_000, 100_000)).toEqual({ outcome: 'retry', nextAttemptAt: 25_000 });
  expect(judge(policy, { error: 'connect ECONNREFUSED' }, 3, 0, 100_000)).toEqual({ outcome: 'retry', nextAttemptAt: 40_000 });
  // The last wait ends at the expiry; failing there expires the batch.
  expect(judge(policy, { status: 500 }, 5, 90_000, 100_000)).toEqual({ outcome: 'retry', nextAttemptAt: 100_000 });
  expect(judge(policy, { status: 500 }, 6, 100_000, 100_000)).toEqual({ outcome: 'expired' });
  expect(judge(policy, { status: 200 }, 6, 100_000, 100_000)).toEqual({ outcome: 'delivered' });
});

test('waits double from the first retry up to the longest wait', () => {
  expect([1, 2, 3, 4, 5].map((attempt) => backoffMs(policy, attempt))).toEqual([10_000, 20_000, 40_000, 60_000, 60_000]);
});

test('batches are consecutive slices of at most the batch size', () => {
  expect(inBatches([1, 2, 3, 4, 5, 6, 7], 3)).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
  expect(inBatches([], 3)).toEqual([]);
});

test('preset windows end at the request minute; CUSTOM windows are checked for order and look-back', () => {
  const now = Date.parse('2026-11-20T10:15:42.123Z');
  const hour = requestWindow({ time_period: 'ONE_HOUR' }, now);
  expect(hour).toEqual({ start: Date.parse('2026-11-20T09:15Z'), end: Date.parse('2026-11-20T10:15Z') });
  expect(platformTime(Date.parse('2026-11-20T09:15Z'))).toBe('2026-11-20 09:15:00.000000');
  expect(requestWindow({ time_period: 'CUSTOM', start: '2026-11-20T09:00+01:00', end: '2026-11-20T09:00Z' }, now)).toEqual({ start: Date.parse('2026-11-20T08:00Z'), end: Date.parse('2026-11-20T09:00Z') });
  expect(requestWindow({ time_period: 'CUSTOM', start: '2026-11-20T09:00Z', end: '2026-11-20T09:00+01:00' }, now)).toMatchObject({ status: 400 });
  expect(requestWindow({ time_period: 'CUSTOM', start: '2026-08-21T10:00Z', end: '2026-11-20T09:00Z' }, now)).toMatchObject({ status: 500 });
  expect(requestWindow({ time_period: 'CUSTOM', start: '2026-08-23T10:00Z', end: '2026-11-20T09:00Z' }, now)).toMatchObject({ start: Date.parse('2026-08-23T10:00Z') });
});

test('4 metrics requests at a time per project; a finished one frees its slot', () => {
  const limits = new MetricsLimits();
  const admitted = [1, 2, 3, 4].map((i) => limits.admit(100001, i * 1000));
  expect(admitted.every((a) => 'release' in a)).toBe(true);
  expect(limits.admit(100001, 5000)).toEqual({ retryAfterSeconds: 1 });
  expect('release' in limits.admit(100002, 5000)).toBe(true);
  (admitted[0] as { release: () => void }).release();
  expect('release' in limits.admit(100001, 6000)).toBe(true);
});
