// An exported event as one JSON line, written from the stored row: every field of the platform's
// export lines, keys in the order of their names (as the platform's files have them), the
// platform's own ID fields under the service's `svc_` names, null where nothing is stored. The
// JSON columns are spliced in as stored text: an event's properties are never parsed here.
import type { ExportRow } from '../store/exported-events.js';

const text = (value: unknown): string => (value === null || value === undefined ? 'null' : JSON.stringify(String(value)));
const number = (value: unknown): string => (value === null || value === undefined ? 'null' : String(Number(value)));
/** The platform writes its object fields as `{}` when they are empty, never null. */
const object = (json: string | null): string => json ?? '{}';

/** `YYYY-MM-DD HH:MM:SS.ffffff` of UTC, the platform's form (stored times have milliseconds). */
export function exportTime(ms: unknown): string {
  if (ms === null || ms === undefined) return 'null';
  const iso = new Date(Number(ms)).toISOString();
  return `"${iso.slice(0, 10)} ${iso.slice(11, 23)}000"`;
}

const hex = (value: number, digits: number) => value.toString(16).padStart(digits, '0');

/**
 * The event's `uuid`: nothing is stored for it, so it is made from the project and the event's
 * place in storage (`ingest_seq`), unique and the same in every export of the event. Laid out
 * as an RFC 9562 version 8 UUID (`aaaaaaaa-ssss-8sss-8sss-00000000ssss`).
 */
export function exportUuid(appId: number, ingestSeq: number): string {
  const seq = hex(ingestSeq, 14);
  return `${hex(appId >>> 0, 8)}-${seq.slice(0, 4)}-8${seq.slice(4, 7)}-8${seq.slice(7, 10)}-00000000${seq.slice(10)}`;
}

/** One line, without its newline. */
export function exportLine(row: ExportRow): string {
  const received = exportTime(row.server_upload_time);
  const time = exportTime(row.time);
  return (
    `{"$insert_id":${text(row.insert_id)},"$schema":null,"adid":${text(row.adid)},"app":${number(row.app_id)},"city":${text(row.city)},` +
    `"client_event_time":${time},"client_upload_time":null,"country":${text(row.country)},"data":{},"data_type":"event",` +
    `"device_brand":${text(row.device_brand)},"device_carrier":${text(row.carrier)},"device_family":null,"device_id":${text(row.device_id)},` +
    `"device_manufacturer":${text(row.device_manufacturer)},"device_model":${text(row.device_model)},"device_type":null,"dma":${text(row.dma)},` +
    `"event_id":${number(row.event_id)},"event_properties":${object(row.event_properties)},"event_time":${time},"event_type":${text(row.event_type)},` +
    `"global_user_properties":{},"group_properties":${object(row.group_properties)},"groups":${object(row.groups)},"idfa":${text(row.idfa)},` +
    `"ip_address":${text(row.ip)},"is_attribution_event":null,"language":${text(row.language)},"library":null,` +
    `"location_lat":${number(row.location_lat)},"location_lng":${number(row.location_lng)},"os_name":${text(row.os_name)},"os_version":${text(row.os_version)},` +
    `"partner_id":null,"paying":null,"plan":${object(row.plan)},"platform":${text(row.platform)},"processed_time":null,"region":${text(row.region)},` +
    `"sample_rate":null,"server_received_time":${received},"server_upload_time":${received},"session_id":${number(row.session_id)},"source_id":null,` +
    `"start_version":null,"svc_attribution_ids":null,"svc_event_type":null,"svc_id":${number(row.svc_id)},"user_creation_time":null,` +
    `"user_id":${text(row.user_id)},"user_properties":${object(row.user_properties)},"uuid":"${exportUuid(Number(row.app_id), Number(row.ingest_seq))}",` +
    `"version_name":${text(row.app_version)}}`
  );
}
