// An exported line as the batch upload's event: every field the batch API takes, under its
// names; the target's own fields left out; group identifications and lines that cannot be sent.
import { describe, expect, test } from 'vitest';
import { convertExportedEvent as convertLine, exportTimeMs } from '../src/export-import.js';

const line = {
  $insert_id: 'insert-1',
  $schema: null,
  adid: 'adid-1',
  app: 187520,
  city: 'Lyon',
  client_event_time: '2026-11-20 09:04:01.250000',
  client_upload_time: null,
  country: 'France',
  data: {},
  data_type: 'event',
  device_brand: 'Apple',
  device_carrier: 'Orange',
  device_family: null,
  device_id: 'device-1',
  device_manufacturer: 'Apple',
  device_model: 'iPhone16,1',
  device_type: null,
  dma: 'Lyon DMA',
  event_id: 7,
  event_properties: { cart: 3, $price: 9.5, $quantity: 2, $revenue: 19, $productId: 'sku-1', $revenueType: 'purchase', toString: 'data' },
  event_time: '2026-11-20 09:04:01.250000',
  event_type: 'Checkout',
  global_user_properties: {},
  group_properties: { ignored: 'unless $groupidentify' },
  groups: { company: 'Acme' },
  idfa: 'AEBE52E7-03EE-455A-B3C4-E57283966239',
  ip_address: '203.0.113.7',
  is_attribution_event: null,
  language: 'French',
  library: 'svc-ts/1.0',
  location_lat: 45.75,
  location_lng: 4.85,
  os_name: 'ios',
  os_version: '18.1',
  partner_id: null,
  paying: null,
  plan: { branch: 'main' },
  platform: 'iOS',
  processed_time: null,
  region: 'Auvergne-Rhone-Alpes',
  sample_rate: null,
  server_received_time: '2026-11-20 09:05:01.250000',
  server_upload_time: '2026-11-20 09:05:01.250000',
  session_id: 1795690000000,
  source_id: null,
  start_version: null,
  svc_attribution_ids: null,
  svc_event_type: null,
  svc_id: 12345,
  user_creation_time: null,
  user_id: 'user-1',
  user_properties: { $set: { tier: 'gold' } },
  uuid: '0002dc80-0000-8000-8000-000000000029',
  version_name: '5.2.0',
};

describe('an exported line', () => {
  test('becomes the upload event of its fields, under the batch API names, without the target-made ones', () => {
    // The fields the batch API names as the export does, with the line's values.
    const kept = ['adid', 'city', 'country', 'device_brand', 'device_id', 'device_manufacturer', 'device_model', 'dma', 'event_id', 'event_properties', 'event_type', 'groups', 'idfa', 'language', 'library', 'location_lat', 'location_lng', 'os_name', 'os_version', 'plan', 'platform', 'region', 'session_id', 'user_id', 'user_properties'] as const;
    expect(convertLine(line)).toEqual({
      event: {
        ...Object.fromEntries(kept.map((field) => [field, line[field]])),
        app_version: '5.2.0',
        carrier: 'Orange',
        insert_id: 'insert-1',
        ip: '203.0.113.7',
        time: Date.UTC(2026, 10, 20, 9, 4, 1, 250),
        price: 9.5,
        quantity: 2,
        revenue: 19,
        productId: 'sku-1',
        revenueType: 'purchase',
      },
    });
  });

  test('without $insert_id, its uuid deduplicates it; empty objects and nulls are not sent', () => {
    const bare = { ...line, $insert_id: null, event_properties: {}, user_properties: {}, groups: {}, plan: {}, user_id: null, version_name: null };
    const converted = convertLine(bare);
    expect(converted).toMatchObject({ event: { insert_id: line.uuid, device_id: 'device-1' } });
    const event = (converted as { event: Record<string, unknown> }).event;
    for (const field of ['event_properties', 'user_properties', 'groups', 'plan', 'user_id', 'app_version', 'price']) expect(event, field).not.toHaveProperty(field);
  });

  test("$identify sets the user's properties after it to exactly those of the line; $groupidentify with ids keeps its group properties", () => {
    const identify = { ...line, event_type: '$identify', user_properties: { tier: 'gold', seats: 3 } };
    expect(convertLine(identify)).toMatchObject({ event: { event_type: '$identify', user_properties: { $clearAll: '-', $set: { tier: 'gold', seats: 3 } } } });
    // A user left without properties (a $clearAll), and operations as an older export wrote them.
    expect(convertLine({ ...identify, user_properties: {} })).toMatchObject({ event: { user_properties: { $clearAll: '-', $set: {} } } });
    expect(convertLine({ ...line, event_type: '$identify' })).toMatchObject({ event: { event_type: '$identify', user_properties: { $set: { tier: 'gold' } } } });
    expect(convertLine({ ...line, event_type: '$groupidentify' })).toMatchObject({ event: { group_properties: { ignored: 'unless $groupidentify' } } });
    expect((convertLine(line) as { event: object }).event).not.toHaveProperty('group_properties');
  });

  test('$groupidentify without user and device goes back as group identifications', () => {
    const stored = { event_type: '$groupidentify', user_id: null, device_id: null, groups: { company: 'Acme', team: ['a', 'b'] }, group_properties: { $set: { size: 10 } } };
    expect(convertLine(stored)).toEqual({
      groups: [
        { group_type: 'company', group_value: 'Acme', group_properties: { $set: { size: 10 } } },
        { group_type: 'team', group_value: 'a', group_properties: { $set: { size: 10 } } },
        { group_type: 'team', group_value: 'b', group_properties: { $set: { size: 10 } } },
      ],
    });
    expect(convertLine({ ...stored, groups: {} })).toEqual({ skipped: '$groupidentify without a group' });
  });

  test('lines that cannot be sent say why', () => {
    expect(convertLine([1])).toEqual({ skipped: 'not a JSON object' });
    expect(convertLine({ ...line, event_type: '' })).toEqual({ skipped: 'no event_type' });
    expect(convertLine({ ...line, user_id: null, device_id: null })).toEqual({ skipped: 'no user_id or device_id' });
    expect(convertLine({ ...line, event_time: 'yesterday', client_event_time: null })).toEqual({ skipped: 'no event_time' });
  });
});

test('export times: microseconds cut to milliseconds, fewer digits or none read as such', () => {
  expect(exportTimeMs('2026-01-02 03:04:05.006789')).toBe(Date.UTC(2026, 0, 2, 3, 4, 5, 6));
  expect(exportTimeMs('2026-01-02 03:04:05.5')).toBe(Date.UTC(2026, 0, 2, 3, 4, 5, 500));
  expect(exportTimeMs('2026-01-02 03:04:05')).toBe(Date.UTC(2026, 0, 2, 3, 4, 5));
  expect(exportTimeMs('2026-01-02T03:04:05Z')).toBeUndefined();
});
