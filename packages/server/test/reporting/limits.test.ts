// The reporting limits per project: 5 at a time, 1000 cost per five minutes, 108,000 per hour.
import { expect, test } from 'vitest';
import { InMemoryReportingLimits, queryCost } from '../../src/shared/reporting-limits.js';

const MINUTE = 60_000;

test('a sixth request at a time is refused until one finishes; projects are apart', async () => {
  const limits = new InMemoryReportingLimits();
  const running = await Promise.all(Array.from({ length: 5 }, () => limits.admit(1, 1, 0)));
  expect(await limits.admit(1, 1, 0)).toMatchObject({ exceeded: 'concurrent_requests', retryAfterSeconds: 1 });
  expect(await limits.admit(2, 1, 0)).toHaveProperty('release');
  const first = running[0]!;
  if (!('release' in first)) throw new Error('admitted');
  first.release();
  first.release(); // twice is once
  expect(await limits.admit(1, 1, 0)).toHaveProperty('release');
  expect(await limits.admit(1, 1, 0)).toMatchObject({ exceeded: 'concurrent_requests' });
});

test('cost: 1000 per rolling five minutes, 108,000 per rolling hour', async () => {
  const limits = new InMemoryReportingLimits({ concurrentRequests: 100, costPerFiveMinutes: 1000, costPerHour: 2500 });
  const spend = async (cost: number, at: number) => {
    const admission = await limits.admit(7, cost, at);
    if ('release' in admission) admission.release();
    return admission;
  };
  expect(await spend(600, 0)).toHaveProperty('release');
  expect(await spend(500, MINUTE)).toMatchObject({ exceeded: 'concurrent_cost', retryAfterSeconds: 300 });
  expect(await spend(400, MINUTE)).toHaveProperty('release');
  expect(await spend(1000, 6 * MINUTE)).toHaveProperty('release');
  expect(await spend(1000, 12 * MINUTE)).toMatchObject({ exceeded: 'hourly_cost' });
  expect(await spend(1000, 61 * MINUTE)).toHaveProperty('release');
});

test('cost = days × conditions (at least one) × type cost', () => {
  expect(queryCost(30, 0, 1)).toBe(30);
  expect(queryCost(30, 2, 1 + 4)).toBe(300);
});
