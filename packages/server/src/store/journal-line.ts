// The journal's line format: one JSON object per record, the fields of a stored event (and the
// attribution hold a line starts or ends), null fields left out. Every engine loads these lines.
import type { JournalRecord, StoredEvent } from './types.js';

/** Column → type (DuckDB's names, which the ClickHouse tables translate); the order of StoredEvent's fields. */
export const EVENT_COLUMNS: Record<keyof StoredEvent, string> = {
  app_id: 'INTEGER',
  insert_id: 'VARCHAR',
  event_type: 'VARCHAR',
  user_id: 'VARCHAR',
  device_id: 'VARCHAR',
  time: 'BIGINT',
  server_upload_time: 'BIGINT',
  session_id: 'BIGINT',
  event_id: 'BIGINT',
  event_properties: 'JSON',
  user_properties: 'JSON',
  groups: 'JSON',
  group_properties: 'JSON',
  skip_user_properties_sync: 'BOOLEAN',
  price: 'DOUBLE',
  quantity: 'INTEGER',
  revenue: 'DOUBLE',
  productId: 'VARCHAR',
  revenueType: 'VARCHAR',
  currency: 'VARCHAR',
  location_lat: 'DOUBLE',
  location_lng: 'DOUBLE',
  ip: 'VARCHAR',
  idfa: 'VARCHAR',
  idfv: 'VARCHAR',
  adid: 'VARCHAR',
  android_id: 'VARCHAR',
  android_app_set_id: 'VARCHAR',
  plan: 'JSON',
  app_version: 'VARCHAR',
  platform: 'VARCHAR',
  os_name: 'VARCHAR',
  os_version: 'VARCHAR',
  device_brand: 'VARCHAR',
  device_manufacturer: 'VARCHAR',
  device_model: 'VARCHAR',
  carrier: 'VARCHAR',
  country: 'VARCHAR',
  region: 'VARCHAR',
  city: 'VARCHAR',
  dma: 'VARCHAR',
  language: 'VARCHAR',
};

/** Columns of a journal line: an event's, plus the attribution hold it starts or ends. */
export const LINE_COLUMNS: Record<string, string> = { ...EVENT_COLUMNS, held_attribution: 'JSON', released_attribution: 'VARCHAR' };
/**
 * The journal line of a record: its JSON without the null fields, which read_json reads
 * back as NULL: lines are smaller and load faster. Unrolled over the known columns: a copy with
 * named stores plus a smaller JSON.stringify costs less than stringifying the full record.
 */
export const journalLine = new Function(
  'record',
  `const line = {};\n${Object.keys(LINE_COLUMNS)
    .map((column) => `if (record[${JSON.stringify(column)}] != null) line[${JSON.stringify(column)}] = record[${JSON.stringify(column)}];`)
    .join('\n')}\nreturn JSON.stringify(line);`,
) as (record: JournalRecord) => string;
