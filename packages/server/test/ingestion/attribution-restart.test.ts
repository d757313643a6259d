// Attribution across restarts: holds and the known advertising/vendor ids are read back
// from the store at start (holds within 72 hours, ids seen within 72 hours).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { startServer, type RunningServer } from '../../src/server.js';
import { Tenancy } from '../../src/shared/tenancy.js';
import { testEngine } from '../support/harness.js';
import { send } from '../support/http.js';

const HOUR = 3_600_000;
// Each start opens the engine in a new process (about 1.3 s more than on the server's own thread).
const THREE_STARTS_MS = 90_000;
const dataDir = mkdtempSync(join(tmpdir(), 'svc-attribution-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
const tenancy = new Tenancy(dataDir);
const project = tenancy.createProject(tenancy.createOrganization('Attribution').id, 'Attribution');

let now = Date.now();
const engine = await testEngine();
const start = () => startServer({ dataDir, host: '127.0.0.1', port: 0, clock: () => now, ...engine });

const attribute = (server: RunningServer, event: Record<string, unknown>) =>
  send(`${server.urls.ingest}/attribution`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ api_key: project.api_key, event: JSON.stringify(event) }).toString(),
  });
const upload = (server: RunningServer, events: Record<string, unknown>[]) =>
  send(`${server.urls.ingest}/batch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: project.api_key, events }) });
const storedOfType = async (server: RunningServer, eventType: string) => (await server.store.events(project.app_id)).filter((e) => e.event_type === eventType);

test('an attribution held before a restart is attached by a matching event after it, once', async () => {
  let server = await start();
  expect((await attribute(server, { event_type: '[Adjust] Install', platform: 'ios', idfa: 'IDFA-RESTART-1' })).status).toBe(200);
  await server.close();

  now += 2 * HOUR;
  server = await start();
  expect(server.attribution.heldCount()).toBe(1);
  expect((await upload(server, [{ event_type: 'App Opened', user_id: 'user-after-restart', idfa: 'IDFA-RESTART-1' }])).status).toBe(200);
  expect(await storedOfType(server, '[Adjust] Install')).toMatchObject([{ user_id: 'user-after-restart', idfa: 'IDFA-RESTART-1' }]);
  await server.close();

  server = await start();
  try {
    expect(server.attribution.heldCount()).toBe(0); // the release was journalled with the event
    expect((await upload(server, [{ event_type: 'App Opened', user_id: 'user-after-restart', idfa: 'IDFA-RESTART-1' }])).status).toBe(200);
    expect(await storedOfType(server, '[Adjust] Install')).toHaveLength(1);
  } finally {
    await server.close();
  }
}, THREE_STARTS_MS);

test('an advertising id seen before a restart attaches an attribution at once after it, for 72 hours', async () => {
  let server = await start();
  expect((await upload(server, [{ event_type: 'App Opened', device_id: 'device-known', adid: 'ADID-RESTART-1', idfv: 'IDFV-RESTART-1' }])).status).toBe(200);
  await server.close();

  now += 71 * HOUR;
  server = await start();
  expect((await attribute(server, { event_type: '[Branch] Install', platform: 'android', adid: 'ADID-RESTART-1' })).status).toBe(200);
  expect(server.attribution.heldCount()).toBe(0);
  expect(await storedOfType(server, '[Branch] Install')).toMatchObject([{ device_id: 'device-known' }]);
  await server.close();

  now += 2 * HOUR; // the idfv was last seen 73 hours ago
  server = await start();
  try {
    expect((await attribute(server, { event_type: '[Adjust] Install', platform: 'ios', idfv: 'IDFV-RESTART-1' })).status).toBe(200);
    expect(server.attribution.heldCount()).toBe(1);
  } finally {
    await server.close();
  }
}, THREE_STARTS_MS);

test('an attribution held for more than 72 hours is not read back, and a matching event no longer attaches it', async () => {
  let server = await start();
  expect((await attribute(server, { event_type: '[Adjust] Reattribution', platform: 'ios', idfa: 'IDFA-EXPIRED-1' })).status).toBe(200);
  await server.close();

  now += 73 * HOUR;
  server = await start();
  try {
    expect(server.attribution.heldCount()).toBe(0); // this hold and the one of the previous test
    expect((await upload(server, [{ event_type: 'App Opened', user_id: 'user-late', idfa: 'IDFA-EXPIRED-1' }])).status).toBe(200);
    expect(await storedOfType(server, '[Adjust] Reattribution')).toEqual([]);
  } finally {
    await server.close();
  }
}, THREE_STARTS_MS);
