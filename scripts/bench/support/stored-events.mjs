// The engine benches' stored events (as the journal holds them): 20 event types, 50,000 users
// with their devices, 1% `$identify`, unique insert_ids; a quarter of the users send their
// first events anonymously (their device joins them in the second half of `total`).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EVENT_COLUMNS, journalLine } from '../../../packages/server/dist/store/journal-line.js';

const START = Date.UTC(2026, 9, 1);
const EVENT_TYPES = Array.from({ length: 20 }, (_, i) => `Event ${String.fromCharCode(65 + i)}`);
const EMPTY = Object.fromEntries(Object.keys(EVENT_COLUMNS).map((name) => [name, null]));

/** The event `index` of `total`, in project `appId`; `idPrefix` sets apart the insert_ids of loaders of one project. */
export function storedEvent(index, total, appId = 1, idPrefix = '') {
  const user = (index * 104729) % 50_000;
  const identify = index % 100 === 0;
  return {
    ...EMPTY,
    app_id: appId,
    insert_id: `${idPrefix}bench-${index}`,
    event_type: identify ? '$identify' : EVENT_TYPES[index % EVENT_TYPES.length],
    user_id: user % 4 === 0 && index < total / 2 ? null : `user-${user}`,
    device_id: `device-${user}`,
    time: START + index * 1000,
    server_upload_time: START + index * 1000,
    session_id: START + user,
    event_properties: identify ? null : { path: `/page/${index % 50}`, amount: (index % 97) * 1.25, nested: { depth: index % 3 } },
    user_properties: identify ? { $set: { plan: user % 5 === 0 ? 'pro' : 'free' }, $add: { visits: 1 } } : null,
    skip_user_properties_sync: false,
    platform: 'iOS',
    os_name: 'ios',
    country: 'Germany',
    idfa: user % 10 === 0 ? `idfa-${user}` : null,
  };
}

/** Writes `total` events of `appId` as journal segments of `segment` events in `dir`; their paths in order. */
export function writeSegments(dir, total, segment, appId = 1, idPrefix = '') {
  const paths = [];
  for (let from = 0, n = 0; from < total; from += segment, n++) {
    const path = join(dir, `segment-${n}.jsonl`);
    const lines = [];
    for (let i = from; i < Math.min(total, from + segment); i++) lines.push(journalLine(storedEvent(i, total, appId, idPrefix)));
    writeFileSync(path, `${lines.join('\n')}\n`);
    paths.push(path);
  }
  return paths;
}
