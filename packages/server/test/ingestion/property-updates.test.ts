// The hourly limit of profile updates per user: a rolling hour in one-minute buckets.
import { expect, test } from 'vitest';
import { DEFAULT_EVENT_RULES, toStoredEvent } from '../../src/model/events.js';
import { PropertyUpdateLimit } from '../../src/ingestion/property-updates.js';

const HOUR = 3_600_000;
const identify = (userId: string | undefined, deviceId = 'device-12345', event_type = '$identify') =>
  toStoredEvent({ event_type, user_id: userId, device_id: deviceId, user_properties: { $set: { a: 1 } } }, { appId: 1, receivedAt: 0, remoteAddress: '' }, DEFAULT_EVENT_RULES);
const dropped = (limit: PropertyUpdateLimit, now: number, ...events: ReturnType<typeof identify>[]) => {
  limit.apply(events, now);
  return events.map((e) => e.skip_user_properties_sync);
};

test('updates beyond the limit within an hour are dropped; an hour after the first ones they pass again', () => {
  const limit = new PropertyUpdateLimit({ perHour: 2 });
  const start = 10 * HOUR;
  expect(dropped(limit, start, identify('user-a'), identify('user-a'), identify('user-a'))).toEqual([false, false, true]);
  expect(dropped(limit, start + 30 * 60_000, identify('user-a'))).toEqual([true]);
  expect(dropped(limit, start + HOUR - 60_000, identify('user-a'))).toEqual([true]);
  expect(dropped(limit, start + HOUR, identify('user-a'), identify('user-a'), identify('user-a'))).toEqual([false, false, true]);
});

test('counted per user, by device without a user; events that update no profile are not counted', () => {
  const limit = new PropertyUpdateLimit({ perHour: 1 });
  expect(dropped(limit, 0, identify('user-a'), identify('user-b'), identify(undefined, 'device-a'), identify(undefined, 'device-a'))).toEqual([false, false, false, true]);
  expect(dropped(limit, 0, identify('user-c', 'device-x', 'Purchase'), identify('user-c'))).toEqual([false, false]);
});
