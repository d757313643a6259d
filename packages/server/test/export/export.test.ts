// The Export API against a server with events received over several hours (the clock moved
// between uploads): the archive's entries (names, one per hour with data, streamed entries),
// each line against the spec's ExportedEvent (every field, keys in order, times, ids), the
// round trip of what was stored, 404 for a range without events, the 400s, 401, and tenant
// isolation. Errors go through the Prism proxy; the archive is read from the server directly
// (Prism's proxy does not pass a binary body through unchanged) and held to the spec here.
import { bundle, validateResponse, validatorFor } from '@svc/openapi-validation';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';
import { postJson, send } from '../support/http.js';
import { linesOf, readExportZip } from './zip-reader.js';

let h: Harness;
const T0 = Date.UTC(2026, 10, 20, 9, 5, 1, 250);
let now = T0;
const HOUR = 3_600_000;
const basic = (p: { api_key: string; secret_key: string }) => ({ authorization: `Basic ${Buffer.from(`${p.api_key}:${p.secret_key}`).toString('base64')}` });
const exportPath = (start: string, end: string) => `/api/2/export?start=${start}&end=${end}`;
const viaProxy = (start: string, end: string, headers: Record<string, string> = basic(h.project)) => send(`${h.proxied.app}${exportPath(start, end)}`, { headers });

/** The archive, read from the server itself, its answer held to the spec. */
async function exported(start: string, end: string, project = h.project) {
  const response = await fetch(`${h.direct}${exportPath(start, end)}`, { headers: basic(project) });
  const archive = Buffer.from(await response.arrayBuffer());
  const contentType = response.headers.get('content-type') ?? '';
  expect(validateResponse('GET', '/api/2/export', response.status, archive.length > 0 ? '(binary)' : '', contentType)).toEqual([]);
  return { response, entries: response.status === 200 ? await readExportZip(archive) : [] };
}

const spec = bundle('export');
const lineSchema = spec.doc.paths['/api/2/export'].get.responses['200']['x-svc-file-contents']['json-lines'];
const lineValidator = validatorFor('export', spec.doc);

const first = {
  event_type: 'Checkout',
  user_id: 'user-export-1',
  device_id: 'device-export-1',
  insert_id: 'insert-export-1',
  time: T0 - 60_000,
  session_id: T0 - 600_000,
  event_id: 7,
  event_properties: { cart: { items: 3, total: 59.9 }, 'odd "name"': 'quoted\nline', toString: 'data, not a key' },
  user_properties: { $set: { tier: 'gold' } },
  groups: { company: 'Acme' },
  app_version: '5.2.0',
  platform: 'iOS',
  os_name: 'ios',
  os_version: '18.1',
  device_brand: 'Apple',
  device_manufacturer: 'Apple',
  device_model: 'iPhone16,1',
  carrier: 'Orange',
  country: 'France',
  region: 'Auvergne-Rhone-Alpes',
  city: 'Lyon',
  language: 'French',
  location_lat: 45.75,
  location_lng: 4.85,
  ip: '203.0.113.7',
  idfa: 'AEBE52E7-03EE-455A-B3C4-E57283966239',
  plan: { branch: 'main', version: '3' },
  price: 4.99,
  quantity: 2,
  productId: 'sku-1',
};

/** The upload's revenue fields: the platform's lines carry them among the event properties. */
const REVENUE_FIELDS = new Set(['price', 'quantity', 'productId']);

/** The upload's fields the export writes under the platform's names. */
const PLATFORM_NAMES = new Map([
  ['insert_id', '$insert_id'],
  ['carrier', 'device_carrier'],
  ['ip', 'ip_address'],
  ['app_version', 'version_name'],
]);

beforeAll(async () => {
  h = await startHarness(['ingest', 'app'], { clock: () => now });
  const upload = (events: object[], project = h.project) => postJson(`${h.proxied.ingest}/2/httpapi`, { api_key: project.api_key, events });
  // Hour 9: two events; hour 10: two; hour 12: one; hour 11 has none.
  expect((await upload([first, { event_type: 'View', device_id: 'device-export-2' }])).status).toBe(200);
  now = T0 + HOUR;
  const identify = { event_type: '$identify', user_id: 'user-export-1', user_properties: { $set: { tier: 'platinum', seats: 3 } } };
  expect((await upload([identify, { event_type: 'View', user_id: 'user-export-1', device_id: 'device-export-1', app_version: '5.3.0' }])).status).toBe(200);
  now = T0 + 3 * HOUR;
  expect((await upload([{ event_type: 'Leave', user_id: 'user-export-1', user_properties: { seats: 4, team: 'ops' } }])).status).toBe(200);
  now = T0 + 5_000;
  expect((await upload([{ event_type: 'Secret', user_id: 'other-user', device_id: 'other-device' }], h.otherProject)).status).toBe(200);
  now = T0 + 4 * HOUR;
  await h.server.store.flush();
});
afterAll(async () => {
  await h?.close();
});

describe('the archive of a range', () => {
  test('one streamed gzip entry per hour with events, named as the platform names its files', async () => {
    const { response, entries } = await exported('20261120T00', '20261120T23');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/zip');
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="${h.project.app_id}_20261120T00_20261120T23.zip"`);
    const app = h.project.app_id;
    expect(entries.map((e) => e.name)).toEqual([`${app}/${app}_2026-11-20_9#0.json.gz`, `${app}/${app}_2026-11-20_10#0.json.gz`, `${app}/${app}_2026-11-20_12#0.json.gz`]);
    for (const entry of entries) {
      expect(entry.compressionMethod).toBe(0);
      expect(entry.dataDescriptor).toBe(true);
    }
    expect(entries.map((e) => linesOf(e).map((line) => JSON.parse(line).event_type))).toEqual([['Checkout', 'View'], ['$identify', 'View'], ['Leave']]);
  });

  test('every line is an ExportedEvent: every field, keys in the order of their names', async () => {
    const { entries } = await exported('20261120T9', '20261120T12');
    const keys = lineSchema.required as string[];
    expect(keys).toEqual([...keys].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    for (const line of entries.flatMap(linesOf)) {
      const event = JSON.parse(line);
      expect(Object.keys(event)).toEqual(keys);
      const { valid, errors } = lineValidator.validate(lineSchema, event);
      expect(errors ?? [], line).toEqual([]);
      expect(valid).toBe(true);
    }
  });

  test('a stored event comes back as it was sent, in the platform fields and formats', async () => {
    const { entries } = await exported('20261120T09', '20261120T09');
    expect(entries).toHaveLength(1);
    const [checkout, view] = linesOf(entries[0]!).map((line) => JSON.parse(line));
    const received = '2026-11-20 09:05:01.250000';
    // Every field sent comes back, under the platform's name where it has another.
    const sent = Object.entries(first).filter(([field]) => field !== 'time' && !REVENUE_FIELDS.has(field));
    expect(checkout).toMatchObject(Object.fromEntries(sent.map(([field, value]) => [PLATFORM_NAMES.get(field) ?? field, value])));
    expect(checkout).toMatchObject({
      $schema: null,
      app: h.project.app_id,
      client_event_time: '2026-11-20 09:04:01.250000',
      event_time: '2026-11-20 09:04:01.250000',
      server_upload_time: received,
      server_received_time: received,
      client_upload_time: null,
      group_properties: {},
      data: {},
      data_type: 'event',
      global_user_properties: {},
      svc_event_type: null,
      svc_attribution_ids: null,
    });
    expect(checkout.svc_id).toEqual(expect.any(Number));
    // The revenue fields follow the properties sent, under the platform's names.
    expect(Object.entries(checkout.event_properties).slice(-4)).toEqual([['$price', 4.99], ['$quantity', 2], ['$revenue', 9.98], ['$productId', 'sku-1']]);
    // The user's later event counts for the same user; the anonymous device is another.
    const later = JSON.parse(linesOf((await exported('20261120T10', '20261120T10')).entries[0]!)[0]!);
    expect(later.svc_id).toBe(checkout.svc_id);
    expect(view.svc_id).not.toBe(checkout.svc_id);
    expect(view).toMatchObject({ $insert_id: null, user_id: null, event_properties: {}, user_properties: {}, groups: {}, session_id: null });
    // The uuid is the event's own and the same in every export.
    expect(checkout.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(view.uuid).not.toBe(checkout.uuid);
    const again = JSON.parse(linesOf((await exported('20261120T00', '20261120T09')).entries[0]!)[0]!);
    expect(again.uuid).toBe(checkout.uuid);
  });

  test("user_properties, paying and start_version are the user's at each event, as reporting reads them", async () => {
    const events = (await exported('20261120T00', '20261120T23')).entries.flatMap(linesOf).map((line) => JSON.parse(line));
    const platinum = { tier: 'platinum', seats: 3 };
    // Keys in order: the profile's, then the event's own others.
    expect(events.map((e) => [e.event_type, JSON.stringify(e.user_properties), e.paying, e.start_version])).toEqual([
      // No profile yet: what the event carried (operations apply on $identify only); paying from its own revenue.
      ['Checkout', JSON.stringify({ $set: { tier: 'gold' } }), true, '5.2.0'],
      ['View', '{}', false, null],
      ['$identify', JSON.stringify(platinum), true, '5.2.0'],
      ['View', JSON.stringify(platinum), true, '5.2.0'],
      ['Leave', JSON.stringify({ ...platinum, seats: 4, team: 'ops' }), true, '5.2.0'],
    ]);
    // Exported alone, an hour reads the profile version of an earlier hour.
    const [leave] = linesOf((await exported('20261120T12', '20261120T12')).entries[0]!).map((line) => JSON.parse(line));
    expect(JSON.stringify(leave.user_properties)).toBe(JSON.stringify({ ...platinum, seats: 4, team: 'ops' }));
  });

  test('only the authenticated project is exported', async () => {
    const own = (await exported('20261120T00', '20261120T23')).entries.flatMap(linesOf).map((line) => JSON.parse(line));
    expect(own.every((event) => event.app === h.project.app_id)).toBe(true);
    expect(own.map((event) => event.event_type)).not.toContain('Secret');
    const other = await exported('20261120T00', '20261120T23', h.otherProject);
    expect(other.entries.map((e) => e.name)).toEqual([`${h.otherProject.app_id}/${h.otherProject.app_id}_2026-11-20_9#0.json.gz`]);
    expect(linesOf(other.entries[0]!).map((line) => JSON.parse(line))).toMatchObject([{ app: h.otherProject.app_id, event_type: 'Secret', device_id: 'other-device' }]);
  });
});

describe('refusals', () => {
  test('404 when the range has no events', async () => {
    const answer = await viaProxy('20261120T11', '20261120T11');
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({ code: 404, error: 'No events from 20261120T11 to 20261120T11' });
    expect((await viaProxy('20251120T00', '20251121T23')).status).toBe(404);
  });

  test('400 for a malformed hour, end before start, or more than 365 days', async () => {
    const refused = async (start: string, end: string, error: RegExp) => {
      const answer = await viaProxy(start, end);
      expect(answer.status, `${start} ${end}`).toBe(400);
      expect(answer.body.code).toBe(400);
      expect(answer.body.error).toMatch(error);
    };
    await refused('20261120', '20261120T23', /start/);
    await refused('20261120T24', '20261120T23', /start \(20261120T24\) is not an hour/);
    await refused('20261120T00', '20260230T00', /end \(20260230T00\) is not an hour/);
    await refused('20261120T00', '20261119T23', /end \(20261119T23\) is before start/);
    await refused('20251120T00', '20261120T00', /longer than 365 days/);
    // Exactly 365 days is allowed (and has events).
    expect((await exported('20251121T00', '20261120T23')).response.status).toBe(200);
    expect((await viaProxy('20261120T00', '')).status).toBe(400);
  });

  test('401 without the project secret key', async () => {
    expect((await viaProxy('20261120T00', '20261120T23', basic({ api_key: h.project.api_key, secret_key: 'wrong-secret' }))).status).toBe(401);
    expect((await viaProxy('20261120T00', '20261120T23', basic({ api_key: h.project.api_key, secret_key: h.otherProject.secret_key }))).status).toBe(401);
  });
});
