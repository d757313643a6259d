// A load cut short may have merged anonymous users into a user it created, re-pointing the
// `svc_id` of their rows in earlier loads (events, profile versions) by mutation. Removing the
// load removes that user, and the load run again creates it under a new `svc_id`: the rows it
// re-pointed must first get their own ids back, or the user would count twice. A merge into a
// user an earlier load holds needs nothing: the load run again merges into it again.
import type { ClickHouseEvents } from './events.js';
import { integers, literal } from './sql-text.js';

/** Runs a mutation of a table, waited for. */
type Mutate = (table: string, mutation: string) => Promise<void>;

/** Puts back the own `svc_id` of rows of earlier loads that the load `name` re-pointed to a user it created. */
export async function revertTornMerges(store: ClickHouseEvents, mutate: Mutate, name: string): Promise<void> {
  const segment = literal(name);
  const merges = (await store.query(`SELECT from_svc, to_svc FROM svc_merges WHERE segment = ${segment}`)).map((r) => ({ from: Number(r.from_svc), to: Number(r.to_svc) }));
  if (merges.length === 0) return;
  const targets = integers(new Set(merges.map((m) => m.to)));
  const kept = await store.query(
    `SELECT svc_id FROM identity_users WHERE segment != ${segment} AND svc_id IN (${targets}) UNION ALL SELECT svc_id FROM identity_devices WHERE segment != ${segment} AND svc_id IN (${targets})`,
  );
  const keptIds = new Set(kept.map((r) => Number(r.svc_id)));
  const made = merges.filter((m) => !keptIds.has(m.to));
  if (made.length === 0) return;
  // An anonymous user is its device's: its events are that device's, which an earlier load holds.
  const devices = await store.query(`SELECT device_id, svc_id FROM identity_devices WHERE segment != ${segment} AND owner IS NULL AND svc_id IN (${integers(made.map((m) => m.from))})`);
  if (devices.length === 0) return;
  const created = integers(new Set(made.map((m) => m.to)));
  const deviceIds = devices.map((d) => literal(String(d.device_id))).join(', ');
  const ownIds = devices.map((d) => `toInt64(${Math.trunc(Number(d.svc_id))})`).join(', ');
  await mutate('events', `UPDATE svc_id = transform(ifNull(device_id, ''), [${deviceIds}], [${ownIds}], assumeNotNull(svc_id)) WHERE svc_id IN (${created}) AND segment != ${segment}`);
  // A profile version is its event's (the same ingest_seq), whose own id is back.
  const versions = await store.query(
    `SELECT ingest_seq, svc_id FROM events WHERE ingest_seq GLOBAL IN (SELECT ingest_seq FROM profile_versions WHERE svc_id IN (${created}) AND segment != ${segment}) AND svc_id IS NOT NULL`,
  );
  if (versions.length === 0) return;
  const seqs = versions.map((v) => `toInt64(${Math.trunc(Number(v.ingest_seq))})`).join(', ');
  const versionIds = versions.map((v) => `toInt64(${Math.trunc(Number(v.svc_id))})`).join(', ');
  await mutate('profile_versions', `UPDATE svc_id = transform(ingest_seq, [${seqs}], [${versionIds}], svc_id) WHERE svc_id IN (${created}) AND segment != ${segment}`);
}
