// The DuckDB engine's user and group profiles: the `$identify` / `$groupidentify` rows of the
// temp table `segment` folded (../profiles.ts) onto the stored profiles, in one transaction with
// the segment's load.
import type { DuckDBConnection } from '@duckdb/node-api';
import { foldProfiles, groupProfileKey, groupsOf, type Properties, updatedProfiles } from '../profiles.js';
import { insertRows, rowsOf, rowsWithKeys, upsertRows } from './results.js';

/** Applies the `$identify` rows of `segment` (joined to their ids) in order: one profile version each. */
export async function applyUserProfiles(connection: DuckDBConnection, ingestSeqBase: number): Promise<void> {
  const rows = await rowsOf(
    connection,
    `SELECT s.app_id, i.svc_id, s.user_properties, s.time, s.seq FROM segment s JOIN segment_ids i USING (seq)
     WHERE s.event_type = '$identify' AND s.user_properties IS NOT NULL AND NOT coalesce(s.skip_user_properties_sync, false) AND i.svc_id IS NOT NULL ORDER BY s.seq`,
  );
  const userKey = (appId: unknown, svcId: unknown) => `${Number(appId)}\u0000${Number(svcId)}`;
  const updates = rows.map((row) => ({
    key: userKey(row.app_id, row.svc_id),
    appId: row.app_id as number,
    svcId: Number(row.svc_id),
    seq: Number(row.seq),
    operations: JSON.parse(row.user_properties as string) as Properties,
    time: Number(row.time),
  }));
  const stored = await rowsWithKeys(connection, 'profiles', 'app_id, svc_id', updatedProfiles(updates).map((u) => [u.appId, u.svcId]), 'app_id, svc_id, properties');
  const prior = new Map(stored.map((row) => [userKey(row.app_id, row.svc_id), JSON.parse(row.properties as string) as Properties]));
  const { profiles, versions } = foldProfiles(updates, (key) => prior.get(key));
  const versionRows = versions.map(({ update, properties }) => [update.appId, update.svcId, update.seq + ingestSeqBase, JSON.stringify(properties)]);
  await insertRows(connection, 'profile_versions', 'app_id, svc_id, ingest_seq, properties', versionRows);
  const changed = [...profiles.values()].map(({ properties, last }) => [last.appId, last.svcId, JSON.stringify(properties), last.time]);
  await upsertRows(connection, 'profiles', 'app_id, svc_id, properties, updated_at', changed);
}

/** Applies the `$groupidentify` rows of `segment` in order. */
export async function applyGroupProfiles(connection: DuckDBConnection): Promise<void> {
  const rows = await rowsOf(
    connection,
    `SELECT app_id, groups, group_properties, time FROM segment
     WHERE event_type = '$groupidentify' AND groups IS NOT NULL AND group_properties IS NOT NULL ORDER BY seq`,
  );
  const updates = rows.flatMap((row) => {
    const appId = row.app_id as number;
    const operations = JSON.parse(row.group_properties as string) as Properties;
    return groupsOf(JSON.parse(row.groups as string) as Record<string, string | string[]>).map((group) => ({ key: groupProfileKey(appId, group), appId, group, operations, time: Number(row.time) }));
  });
  const keys = updatedProfiles(updates).map(({ appId, group }) => [appId, group.group_type, group.group_value]);
  const stored = await rowsWithKeys(connection, 'group_profiles', 'app_id, group_type, group_value', keys, 'app_id, group_type, group_value, properties');
  const prior = new Map(
    stored.map((row) => [groupProfileKey(Number(row.app_id), { group_type: row.group_type as string, group_value: row.group_value as string }), JSON.parse(row.properties as string) as Properties]),
  );
  const changed = [...foldProfiles(updates, (key) => prior.get(key)).profiles.values()].map(({ properties, last }) => [last.appId, last.group.group_type, last.group.group_value, JSON.stringify(properties), last.time]);
  await upsertRows(connection, 'group_profiles', 'app_id, group_type, group_value, properties, updated_at', changed);
}
