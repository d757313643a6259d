// Events and a user mapping for the demo project before fuzzing, so that reporting answers
// are not all empty: a few hundred events of the seeded names (boundaries.ts) over the last
// 30 days through POST /2/httpapi, then a mapping through POST /usermap; resolves once
// reporting sees the events (the journal loads them in the background).
import { SEEDED } from './boundaries.js';
import type { RunningServer } from './engines.js';

const DAY = 86_400_000;

/** `count` events, the i-th of user i % 20 on day i % 30 before now, with properties reporting groups and filters by. */
export function seededEvents(count: number, now = Date.now(), run = 'seed') {
  return Array.from({ length: count }, (_, i) => {
    const user = i % 20;
    const time = now - (i % 30) * DAY - (i % 7) * 60_000;
    return {
      event_type: SEEDED.eventTypes[i % SEEDED.eventTypes.length],
      user_id: `fuzz-user-${user}`,
      device_id: `fuzz-device-${user}`,
      time,
      session_id: time - (time % 1_800_000),
      insert_id: `${run}-${i}`,
      country: ['Germany', 'Japan', 'Brazil'][user % 3],
      platform: user % 2 === 0 ? 'iOS' : 'Web',
      event_properties: { item_id: `sku-${i % 5}`, price_tier: i % 4 },
      user_properties: { plan: user % 4 === 0 ? 'pro' : 'free', cohort: `c${user % 3}` },
    };
  });
}

async function post(server: RunningServer, path: string, body: unknown): Promise<void> {
  const answer = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (answer.status !== 200) throw new Error(`seeding: ${path} answered ${answer.status} ${await answer.text()}`);
}

export async function seedEvents(server: RunningServer, count = 400): Promise<void> {
  await post(server, '/2/httpapi', { api_key: server.apiKey, events: seededEvents(count) });
  await post(server, '/usermap', { api_key: server.apiKey, mapping: [{ user_id: 'fuzz-user-1', global_user_id: 'fuzz-user-0' }] });
  const authorization = `Basic ${Buffer.from(`${server.apiKey}:${server.secretKey}`).toString('base64')}`;
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const answer = await fetch(`${server.url}/api/2/events/list`, { headers: { authorization } });
    const list = answer.ok ? ((await answer.json()) as { data?: unknown[] }) : {};
    if ((list.data?.length ?? 0) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error('seeding: the events were not visible to reporting after 60 s');
}
