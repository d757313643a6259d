// Clients already in the field beyond the three documents: the legacy SDKs' form upload
// (`POST /`, amplitude-js 8.x and the older mobile SDKs) and the Identify API
// (`POST /identify`). Both turn what they receive into event records and go through the
// batch upload's path (its rules, throttle, insert_id window and journal); both answer the
// text `success`, which those clients compare against.
import { createHash } from 'node:crypto';
import type { components } from '../generated/ingestion.js';
import type { HandlerRequest, Reply } from '../http/operations.js';
import type { EventRecord } from '../model/events.js';
import { copyDataRecord } from '../shared/data-record.js';
import type { IngestionService } from './handlers.js';

type LegacySdkEvent = components['schemas']['LegacySdkEvent'];
type Identification = components['schemas']['Identification'];

/** The SDK event's fields that the event record names alike. */
const SAME_NAMES = ['user_id', 'device_id', 'session_id', 'event_id', 'event_properties', 'user_properties', 'group_properties', 'groups', 'platform', 'os_name', 'os_version', 'device_model', 'device_manufacturer', 'language', 'carrier', 'plan'] as const;

/** The Identify API's user-level fields, which an event record carries under the same names. */
const IDENTIFY_FIELDS = ['user_id', 'device_id', 'groups', 'app_version', 'platform', 'os_name', 'os_version', 'device_brand', 'device_manufacturer', 'device_model', 'carrier', 'country', 'region', 'city', 'dma', 'language'] as const;
/**
 * The Identify API's fields that no event carries: the user's profile keeps them (set by the
 * identification), and reporting's built-in `paying` and `start_version` read them there.
 */
const PROFILE_FIELDS = ['paying', 'start_version'] as const;

/** Copies the fields that are present and not null (the SDKs send null for "not set"). */
function present<T extends object>(source: T, names: readonly (keyof T & string)[]): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const name of names) if (source[name] !== undefined && source[name] !== null) fields[name] = source[name];
  return fields;
}

/** An SDK event as the batch upload's record; the location comes from the request's address, as for browsers. */
export function legacyRecord(event: LegacySdkEvent): EventRecord {
  const record: Record<string, unknown> = { event_type: event.event_type, ...present(event, SAME_NAMES), ip: '$remote' };
  if (event.timestamp !== undefined) record.time = event.timestamp;
  if (typeof event.uuid === 'string' && event.uuid !== '') record.insert_id = event.uuid;
  if (typeof event.version_name === 'string') record.app_version = event.version_name;
  return record as EventRecord;
}

/**
 * The identification's user properties with its PROFILE_FIELDS last, as plain keys: a plain key
 * is a `$set` where it is written, so they are set after every operation the identification
 * sends, `$clearAll` included.
 */
function userPropertiesOf(identification: Identification): Record<string, unknown> | undefined {
  const sent = identification.user_properties ?? undefined;
  const fields = Object.entries(present(identification, PROFILE_FIELDS));
  if (fields.length === 0) return sent;
  const properties = copyDataRecord<unknown>(sent ?? {});
  for (const [name, value] of fields) {
    delete properties[name]; // a key is written again at the end only once removed
    properties[name] = value;
  }
  return properties;
}

/** An identification as the `$identify` event it is stored as. */
export function identifyRecord(identification: Identification): EventRecord {
  const userProperties = userPropertiesOf(identification);
  return { event_type: '$identify', ...present(identification, IDENTIFY_FIELDS), ...(userProperties ? { user_properties: userProperties } : {}) } as EventRecord;
}

/** The form fields exactly as sent: the checksum is over their text, not over a re-serialization. */
function sentFields(bodyText: string | undefined): URLSearchParams {
  return new URLSearchParams(bodyText ?? '');
}

/** The legacy SDKs' checksum: MD5 of v + client + e + upload_time, as sent. */
export function legacyChecksum(fields: URLSearchParams): string {
  return createHash('md5')
    .update(`${fields.get('v') ?? ''}${fields.get('client') ?? ''}${fields.get('e') ?? ''}${fields.get('upload_time') ?? ''}`, 'utf8')
    .digest('hex');
}

/** The index of the first record with neither a user_id nor a device_id. */
const withoutIds = (records: EventRecord[]) => records.findIndex((r) => r.user_id === undefined && r.device_id === undefined);

export class LegacyIngestion {
  constructor(private readonly ingestion: IngestionService) {}

  upload = async (request: HandlerRequest<'createLegacySdkEvents'>): Promise<Reply<'createLegacySdkEvents'>> => {
    const fields = sentFields(request.bodyText);
    if (legacyChecksum(fields).toLowerCase() !== String(request.body.checksum).toLowerCase()) {
      return { status: 400, body: { code: 400, error: 'checksum does not match the MD5 of v, client, e and upload_time' } };
    }
    return this.stored(request, (request.body.e as LegacySdkEvent[]).map(legacyRecord), 'event');
  };

  identify = async (request: HandlerRequest<'createIdentifications'>): Promise<Reply<'createIdentifications'>> => {
    const sent = request.body.identification as Identification | Identification[];
    const items = Array.isArray(sent) ? sent : [sent];
    return this.stored(request, items.map(identifyRecord), 'identification');
  };

  /** Ingests the records as one batch upload: `success`, or the upload's refusal. */
  private async stored(request: HandlerRequest<'createLegacySdkEvents' | 'createIdentifications'>, records: EventRecord[], noun: string) {
    const missing = withoutIds(records);
    if (missing >= 0) return { status: 400 as const, body: { code: 400, error: `${noun} ${missing} has neither a user_id nor a device_id` } };
    const outcome = await this.ingestion.ingest(request, { api_key: request.caller.project!.api_key, events: records });
    if ('status' in outcome) return outcome;
    return { status: 200 as const, body: 'success' as const };
  }
}
