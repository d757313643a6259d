// The ClickHouse engine's user and group profiles: a segment's `$identify` / `$groupidentify`
// events folded (../profiles.ts) onto the latest stored rows, written as new rows of the
// segment's version (the tables are append-only, tables.ts).
import { foldProfiles, groupProfileKey, groupsOf, type Properties, updatedProfiles } from '../profiles.js';
import type { ClickHouseEvents, ResolvedEvent } from './events.js';
import { insertRows } from './statements.js';
import { integers, literal } from './sql-text.js';
import { splitProperties } from '../user-at-event.js';

export interface Profile {
  appId: number;
  properties: Properties;
  updatedAt: number;
}

/** The latest stored profiles of these `svc_id`s (deleted ones left out). */
export async function storedProfiles(store: ClickHouseEvents, svcIds: Set<number>): Promise<Map<number, Profile>> {
  const profiles = new Map<number, Profile>();
  if (svcIds.size === 0) return profiles;
  const rows = await store.query(
    `SELECT app_id, svc_id, argMax(properties, version) AS properties, argMax(updated_at, version) AS updated_at, argMax(deleted, version) AS deleted
     FROM profiles WHERE svc_id IN (${integers(svcIds)}) GROUP BY app_id, svc_id`,
  );
  for (const row of rows) {
    if (Number(row.deleted) === 0) profiles.set(Number(row.svc_id), { appId: Number(row.app_id), properties: JSON.parse(row.properties as string) as Properties, updatedAt: Number(row.updated_at) });
  }
  return profiles;
}

/** A profile version's split columns (tables.ts). */
function splitVersion(properties: Properties): { property_keys: string[]; property_values: string[] } {
  const [keys, values] = splitProperties(properties);
  return { property_keys: keys, property_values: values };
}

/**
 * Merged devices' profiles move to their user (the user's own wins), then the segment's
 * `$identify` events apply in order: one profile version each, one current row per user.
 */
export async function applyUserProfiles(store: ClickHouseEvents, events: ResolvedEvent[], merges: { from: number; to: number }[], segment: string, version: number): Promise<void> {
  const identifies = events.filter((e) => e.event_type === '$identify' && e.user_properties !== null && !e.skip_user_properties_sync && e.svc_id !== null);
  const involved = new Set([...merges.flatMap((m) => [m.from, m.to]), ...identifies.map((e) => e.svc_id!)]);
  const profiles = await storedProfiles(store, involved);
  const changed = new Map<number, { appId: number; deleted: boolean }>();
  for (const { from, to } of merges) {
    const merged = profiles.get(from);
    if (!merged) continue;
    if (!profiles.has(to)) {
      profiles.set(to, merged);
      changed.set(to, { appId: merged.appId, deleted: false });
    }
    profiles.delete(from);
    changed.set(from, { appId: merged.appId, deleted: true });
  }
  const folded = foldProfiles(
    identifies.map((event) => ({ key: event.svc_id!, operations: event.user_properties!, time: event.time, event })),
    (svcId) => profiles.get(svcId)?.properties,
  );
  for (const [svcId, { properties, last }] of folded.profiles) {
    profiles.set(svcId, { appId: last.event.app_id, properties, updatedAt: last.time });
    changed.set(svcId, { appId: last.event.app_id, deleted: false });
  }
  const versions = folded.versions.map(({ update: { key, event }, properties }) => ({ app_id: event.app_id, svc_id: key, ingest_seq: event.ingest_seq, properties: JSON.stringify(properties), segment, ...splitVersion(properties) }));
  await insertRows(store, 'profile_versions', versions);
  await insertRows(
    store,
    'profiles',
    [...changed].map(([svcId, { appId, deleted }]) => {
      const profile = profiles.get(svcId);
      return { app_id: appId, svc_id: svcId, properties: deleted ? '{}' : JSON.stringify(profile!.properties), updated_at: profile?.updatedAt ?? 0, version, deleted: Number(deleted), segment };
    }),
  );
}

/** The segment's `$groupidentify` events in order: one current row per group. */
export async function applyGroupProfiles(store: ClickHouseEvents, events: ResolvedEvent[], segment: string, version: number): Promise<void> {
  const groupEvents = events.filter((e) => e.event_type === '$groupidentify' && e.groups !== null && e.group_properties !== null);
  const updates = groupEvents.flatMap((event) => groupsOf(event.groups!).map((group) => ({ key: groupProfileKey(event.app_id, group), appId: event.app_id, group, operations: event.group_properties!, time: event.time })));
  if (updates.length === 0) return;
  const stored = await store.query(
    `SELECT app_id, group_type, group_value, argMax(properties, version) AS properties FROM group_profiles
     WHERE (app_id, group_type, group_value) IN (${updatedProfiles(updates).map((u) => `(${u.appId}, ${literal(u.group.group_type)}, ${literal(u.group.group_value)})`).join(', ')})
     GROUP BY app_id, group_type, group_value`,
  );
  const prior = new Map<string, Properties>();
  for (const row of stored) prior.set(groupProfileKey(Number(row.app_id), { group_type: row.group_type as string, group_value: row.group_value as string }), JSON.parse(row.properties as string) as Properties);
  const { profiles } = foldProfiles(updates, (key) => prior.get(key));
  await insertRows(
    store,
    'group_profiles',
    [...profiles.values()].map(({ properties, last }) => ({ app_id: last.appId, group_type: last.group.group_type, group_value: last.group.group_value, properties: JSON.stringify(properties), updated_at: last.time, version, segment })),
  );
}
