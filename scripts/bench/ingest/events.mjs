// Realistic upload bodies: 2000 events each, 20 event types, 50,000 users with their own
// devices, nested properties, unique insert_ids (dedupe on, nothing deduplicated).
import { randomUUID } from 'node:crypto';

const EVENT_TYPES = Array.from({ length: 20 }, (_, i) => `Event ${String.fromCharCode(65 + i)}`);
const COUNTRIES = ['United States', 'Germany', 'France', 'Japan', 'Brazil', 'India', 'Canada', 'Spain'];
const PLATFORMS = [
  { platform: 'iOS', os_name: 'ios', os_version: '17.4', device_model: 'iPhone15,2' },
  { platform: 'Android', os_name: 'android', os_version: '14', device_model: 'Pixel 8' },
  { platform: 'Web', os_name: 'Chrome', os_version: '124', device_model: 'Mac' },
];

function event(run, batch, index, now) {
  const user = (batch * 7919 + index * 104729) % 50_000;
  const platform = PLATFORMS[user % PLATFORMS.length];
  return {
    event_type: EVENT_TYPES[(index * 31 + batch) % EVENT_TYPES.length],
    user_id: `user-${String(user).padStart(6, '0')}`,
    device_id: `device-${String(user).padStart(6, '0')}-${user % 3}`,
    time: now - (index % 1000) * 1000,
    insert_id: `${run}-${batch}-${index}-${randomUUID()}`,
    session_id: now - (user % 3600) * 1000,
    ...platform,
    app_version: `2.${user % 10}.0`,
    country: COUNTRIES[user % COUNTRIES.length],
    city: `City ${user % 300}`,
    language: 'en',
    ip: `10.${user % 256}.${index % 256}.${batch % 256}`,
    event_properties: { item_id: `sku-${index % 500}`, price_tier: index % 4, tags: ['a', 'b'], source: { campaign: `c${batch % 12}`, medium: 'email' } },
    user_properties: { plan: user % 5 === 0 ? 'pro' : 'free', cohort: `2026-${String((user % 12) + 1).padStart(2, '0')}` },
  };
}

/** `count` upload bodies (JSON text) for one run; events happen up to 1000 s before `now` (ms). */
export function makeBodies(apiKey, run, count, eventsPerBatch = 2000, now = Date.now()) {
  return Array.from({ length: count }, (_, batch) =>
    JSON.stringify({ api_key: apiKey, events: Array.from({ length: eventsPerBatch }, (_, i) => event(run, batch, i, now)) }),
  );
}
