// The DuckDB engine's tables and the column lists its SQL repeats: events land in one table
// (the journal line's columns, then the engine's own), identities, profiles and the other
// entities in small tables beside it.
import { EVENT_COLUMNS, LINE_COLUMNS } from '../journal-line.js';

export const JSON_COLUMNS = Object.entries(EVENT_COLUMNS)
  .filter(([, type]) => type === 'JSON')
  .map(([name]) => name);
export const quote = (name: string) => `"${name}"`;
export const sqlString = (value: string) => `'${value.replace(/'/g, "''")}'`;
export const columnList = Object.keys(EVENT_COLUMNS).map(quote).join(', ');
/** An event row's columns other than the materialized properties (which are the engine's, not the event's). */
export const STORED_COLUMNS = `${columnList}, seq, svc_id, ingest_seq`;
export const segmentColumnList = Object.keys(EVENT_COLUMNS).map((name) => `s.${quote(name)}`).join(', ');
/** The columns `read_json` reads a journal segment with. */
export const SEGMENT_COLUMNS = `{${Object.entries(LINE_COLUMNS)
  .map(([column, type]) => `${sqlString(column)}: ${sqlString(type)}`)
  .join(', ')}}`;

export const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (${Object.entries(EVENT_COLUMNS)
  .map(([name, type]) => `${quote(name)} ${type}`)
  .join(', ')}, seq BIGINT);
${Object.entries(EVENT_COLUMNS)
  .map(([name, type]) => `ALTER TABLE events ADD COLUMN IF NOT EXISTS ${quote(name)} ${type};`)
  .join('\n')}
ALTER TABLE events ADD COLUMN IF NOT EXISTS svc_id BIGINT;
ALTER TABLE events ADD COLUMN IF NOT EXISTS ingest_seq BIGINT;
CREATE TABLE IF NOT EXISTS loaded_segments (name VARCHAR PRIMARY KEY, loaded_at BIGINT);
CREATE TABLE IF NOT EXISTS identity_users (app_id INTEGER, user_id VARCHAR, svc_id BIGINT, PRIMARY KEY (app_id, user_id));
CREATE TABLE IF NOT EXISTS identity_devices (app_id INTEGER, device_id VARCHAR, svc_id BIGINT, owner VARCHAR, PRIMARY KEY (app_id, device_id));
CREATE TABLE IF NOT EXISTS svc_merges (from_svc BIGINT PRIMARY KEY, to_svc BIGINT);
CREATE TABLE IF NOT EXISTS profiles (app_id INTEGER, svc_id BIGINT, properties JSON, updated_at BIGINT, PRIMARY KEY (app_id, svc_id));
CREATE TABLE IF NOT EXISTS profile_versions (app_id INTEGER, svc_id BIGINT, ingest_seq BIGINT, properties JSON);
CREATE TABLE IF NOT EXISTS cohort_members (app_id INTEGER, cohort_id VARCHAR, svc_id BIGINT);
CREATE TABLE IF NOT EXISTS held_attributions (id VARCHAR PRIMARY KEY, app_id INTEGER, received_at BIGINT, event JSON);
CREATE TABLE IF NOT EXISTS group_profiles (app_id INTEGER, group_type VARCHAR, group_value VARCHAR, properties JSON, updated_at BIGINT, PRIMARY KEY (app_id, group_type, group_value));
CREATE TABLE IF NOT EXISTS materialized_properties (name VARCHAR PRIMARY KEY, column_name VARCHAR NOT NULL, ready BOOLEAN NOT NULL);
CREATE TABLE IF NOT EXISTS user_summaries (app_id INTEGER, svc_id BIGINT, start_seq BIGINT, start_version VARCHAR, first_paid_seq BIGINT, PRIMARY KEY (app_id, svc_id));
`;

/** These users' `svc_id`s: the parameter is their JSON list. */
export const IN_USERS = 'svc_id IN (SELECT unnest(?::BIGINT[]))';
/** The condition on `identity_devices` of the devices of these users (their own or joined to them); parameters: project, users, project, users. */
export const USERS_DEVICES = `app_id = ? AND (${IN_USERS} OR owner IN (SELECT user_id FROM identity_users WHERE app_id = ? AND ${IN_USERS}))`;
