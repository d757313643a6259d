// The DuckDB engine's user and group profiles: the `$identify` / `$groupidentify` rows of the
// temp table `segment` folded (../profiles.ts) onto the stored profiles, in one transaction with
// the segment's load.
import type { DuckDBConnection } from '@duckdb/node-api';
import { foldProfiles, groupProfileKey, groupsOf, type Properties, updatedProfiles } from '../profiles.js';
import { appendAll, rowsOf } from './results.js';

/** Applies the `$identify` rows of `segment` (joined to their ids) in order: one profile version each. */
export async function applyUserProfiles(connection: DuckDBConnection, ingestSeqBase: number): Promise<void> {
  const rows = await rowsOf(
    connection,
    `SELECT s.app_id, i.svc_id, s.user_properties, s.time, s.seq FROM segment s JOIN segment_ids i USING (seq)
     WHERE s.event_type = '$identify' AND s.user_properties IS NOT NULL AND NOT coalesce(s.skip_user_properties_sync, false) AND i.svc_id IS NOT NULL ORDER BY s.seq`,
  );
  const updates = rows.map((row) => ({
    key: `${row.app_id}\u0000${row.svc_id}`,
    appId: row.app_id as number,
    svcId: Number(row.svc_id),
    seq: Number(row.seq),
    operations: JSON.parse(row.user_properties as string) as Properties,
    time: Number(row.time),
  }));
  const prior = new Map<string, Properties>();
  for (const { key, appId, svcId } of updatedProfiles(updates)) {
    const [stored] = await rowsOf(connection, 'SELECT properties FROM profiles WHERE app_id = ? AND svc_id = ?', [appId, svcId]);
    if (stored) prior.set(key, JSON.parse(stored.properties as string) as Properties);
  }
  const { profiles, versions } = foldProfiles(updates, (key) => prior.get(key));
  await connection.run('CREATE OR REPLACE TEMP TABLE versions_changes AS SELECT * FROM profile_versions LIMIT 0');
  const appender = await connection.createAppender('versions_changes', 'main', 'temp');
  await appendAll(appender, versions, ({ update, properties }) => {
    appender.appendInteger(update.appId);
    appender.appendBigInt(BigInt(update.svcId));
    appender.appendBigInt(BigInt(update.seq + ingestSeqBase));
    appender.appendVarchar(JSON.stringify(properties));
  });
  await connection.run('INSERT INTO profile_versions SELECT * FROM versions_changes');
  for (const { properties, last } of profiles.values()) {
    await connection.run('INSERT OR REPLACE INTO profiles VALUES (?, ?, ?, ?)', [last.appId, last.svcId, JSON.stringify(properties), last.time]);
  }
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
  const prior = new Map<string, Properties>();
  for (const { key, appId, group } of updatedProfiles(updates)) {
    const [stored] = await rowsOf(connection, 'SELECT properties FROM group_profiles WHERE app_id = ? AND group_type = ? AND group_value = ?', [appId, group.group_type, group.group_value]);
    if (stored) prior.set(key, JSON.parse(stored.properties as string) as Properties);
  }
  for (const { properties, last } of foldProfiles(updates, (key) => prior.get(key)).profiles.values()) {
    await connection.run('INSERT OR REPLACE INTO group_profiles VALUES (?, ?, ?, ?, ?)', [last.appId, last.group.group_type, last.group.group_value, JSON.stringify(properties), last.time]);
  }
}
