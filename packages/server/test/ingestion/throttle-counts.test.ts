// The throttle's counts without a server: a request's events are counted per id once it is
// admitted, and nothing of a refused request stays behind for the next one.
import { expect, test } from 'vitest';
import { Throttle } from '../../src/ingestion/throttle.js';

const now = 1_700_000_000_000;
const events = (count: number, device_id: string, user_id: string) => Array.from({ length: count }, () => ({ device_id, user_id }));

test('a refused request leaves no count behind; ids repeated in a request count each event', () => {
  const throttle = new Throttle({ epsThreshold: 1, windowSeconds: 10, dailyLimit: 1000, silenceSeconds: 0 });
  expect(throttle.admit(1, [...events(6, 'd', 'u1'), ...events(5, 'd', 'u2')], now)).toMatchObject({ throttled_devices: { d: 1.1 }, throttled_users: {} });
  expect(throttle.admit(1, [...events(4, 'd', 'u1'), ...events(6, 'd', 'u2')], now)).toBeUndefined();
  expect(throttle.admit(1, events(1, 'd', 'u3'), now)).toMatchObject({ throttled_devices: { d: 1.1 }, throttled_events: [0] });
  expect(throttle.admit(1, events(1, 'e', 'u2'), now)).toBeUndefined();
  expect(throttle.admit(1, events(5, 'f', 'u2'), now)).toMatchObject({ throttled_devices: {}, throttled_users: { u2: 1.2 }, throttled_events: [0, 1, 2, 3, 4] });
});
