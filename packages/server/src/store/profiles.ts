// User and group profiles folded from their updates (`$identify` user properties,
// `$groupidentify` group properties), the same in every engine: each engine reads the prior
// profiles and writes the folded ones and their versions in its own rows.
import { applyPropertyOperations } from './profile-operations.js';
import type { GroupKey } from './types.js';

export type Properties = Record<string, unknown>;

/** One update of the profile `key`: its property operations and time, with whatever the engine writes of it. */
export interface ProfileUpdate {
  key: unknown;
  operations: Properties;
  time: number;
}

export interface ProfileFold<U extends ProfileUpdate> {
  /** Each profile updated (in the order of its first update): its properties after its last update, that update. */
  profiles: Map<U['key'], { properties: Properties; last: U }>;
  /** The properties after each update, in the updates' order (one profile version each). */
  versions: { update: U; properties: Properties }[];
}

/** One update of each profile the updates change (its first): the profiles to read before the fold. */
export function updatedProfiles<U extends ProfileUpdate>(updates: readonly U[]): U[] {
  const first = new Map<U['key'], U>();
  for (const update of updates) if (!first.has(update.key)) first.set(update.key, update);
  return [...first.values()];
}

/** Applies the updates in order, each profile from its `prior` properties (none: empty). */
export function foldProfiles<U extends ProfileUpdate>(updates: readonly U[], prior: (key: U['key']) => Properties | undefined): ProfileFold<U> {
  const profiles: ProfileFold<U>['profiles'] = new Map();
  const versions: ProfileFold<U>['versions'] = [];
  for (const update of updates) {
    const before = profiles.has(update.key) ? profiles.get(update.key)!.properties : (prior(update.key) ?? {});
    const properties = applyPropertyOperations(before, update.operations);
    profiles.set(update.key, { properties, last: update });
    versions.push({ update, properties });
  }
  return { profiles, versions };
}

/** The groups a `$groupidentify` event updates: a group type may name several values. */
export function groupsOf(groups: Record<string, string | string[]>): GroupKey[] {
  return Object.entries(groups).flatMap(([groupType, values]) => (Array.isArray(values) ? values : [values]).map((groupValue) => ({ group_type: groupType, group_value: groupValue })));
}

/** A group profile's key in a fold. */
export const groupProfileKey = (appId: number, group: GroupKey): string => JSON.stringify([appId, group.group_type, group.group_value]);
