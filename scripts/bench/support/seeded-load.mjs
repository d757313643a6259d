// Seeded datasets of the benchmarks: a small PRNG, and events written as journal segments and
// loaded through the DuckDB engine's loader into a data directory (as the server loads them).
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDbEngine } from '../../../packages/server/dist/store/duckdb/engine.js';

/** mulberry32: a small seeded PRNG. */
export function random(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Loads `count` events (`eventOf(i)`, a stored event) into the DuckDB engine of `dataDir`, in
 * segments of 250,000; resolves with the seconds it took (generation included).
 */
export async function loadEvents(dataDir, count, eventOf) {
  const engine = await DuckDbEngine.open(dataDir);
  const started = performance.now();
  const perSegment = 250_000;
  for (let offset = 0, segment = 0; offset < count; offset += perSegment, segment++) {
    const lines = [];
    for (let i = offset; i < Math.min(count, offset + perSegment); i++) lines.push(engine.journalLine(eventOf(i)));
    const path = join(dataDir, `bench-${segment}.ndjson`);
    writeFileSync(path, `${lines.join('\n')}\n`);
    await engine.loadSegment(path, `bench-${segment}`);
    rmSync(path);
  }
  const seconds = (performance.now() - started) / 1000;
  await engine.close();
  return seconds;
}

const COUNTRIES = ['United States', 'Germany', 'France', 'India', 'Brazil', 'Japan'];

/** The device and place fields of a seeded user's events, as an SDK sends them. */
export function deviceFields(user) {
  return {
    country: COUNTRIES[user % COUNTRIES.length],
    city: 'Springfield',
    language: 'English',
    platform: user % 3 === 0 ? 'iOS' : 'Android',
    os_name: user % 3 === 0 ? 'ios' : 'android',
    os_version: '17.1',
    device_model: 'Pixel 8',
    app_version: `2.${user % 7}.0`,
    ip: '203.0.113.9',
  };
}

const HOUR = 3_600_000;
const TYPES = ['View Item', 'Add to Cart', 'Checkout', 'Purchase', 'Search', 'Share', 'Login', 'Open App'];

/**
 * `count` events of a day (ms of its UTC midnight) received evenly over its 24 hours, as an SDK sends
 * them (properties, a user property update now and then, a group, device fields), loaded as
 * loadEvents does; `users` seeded users, a few of them far busier than most.
 */
export function loadSeededDay(dataDir, appId, count, users, day) {
  const next = random(7);
  return loadEvents(dataDir, count, (i) => {
    const user = Math.floor(next() ** 1.5 * users);
    // Spread evenly over the day's hours, in order: the journal is in order of receipt.
    const received = day + Math.floor((i / count) * 24 * HOUR);
    return {
      app_id: appId,
      insert_id: `e-${i}`,
      event_type: TYPES[Math.floor(next() * TYPES.length)],
      user_id: `user-${user}`,
      device_id: `device-${user}`,
      time: received - Math.floor(next() * 5_000),
      server_upload_time: received,
      session_id: received - (received % 1_800_000),
      event_id: i % 1000,
      event_properties: { item_id: `sku-${Math.floor(next() * 500)}`, price: Math.round(next() * 10_000) / 100, page: '/catalog/shoes' },
      user_properties: i % 10 === 0 ? { $set: { plan: user % 2 ? 'pro' : 'free', visits: i % 50 } } : null,
      groups: user % 4 === 0 ? { company: `company-${user % 97}` } : null,
      ...deviceFields(user),
      skip_user_properties_sync: false,
    };
  });
}
