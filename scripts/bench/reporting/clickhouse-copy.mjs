// The ClickHouse side of the reporting benchmark: the events of the DuckDB file, as the
// journal loader resolved them (svc_id, ingest_seq), with its identities and profiles, copied
// into a private ClickHouse server whose data stays in DIR/clickhouse/server, in the tables
// the ClickHouse engine creates and reads (its migrations, its segment-tagged rows and its
// load mark), so a server on that database answers as if it had loaded them itself.
// The copy goes through CSV: DuckDB writes it in parallel, ClickHouse parses it natively,
// far faster than turning 10 million rows into JS objects for the RowBinary path. CSV is
// exact for the benchmark's columns (integers, strings, JSON text); 18.16 parses floats in
// text inexactly (src/store/clickhouse/row-binary.ts), which the benchmark's events do not
// have (the check below compares sums of the integer columns (time in seconds: milliseconds overflow Int64) and the JSON text's length).
import { DuckDBInstance } from '@duckdb/node-api';
import { copyFileSync, createReadStream, existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { CLICKHOUSE_EVENT_COLUMNS, ClickHouseEvents } from '../../../packages/server/dist/store/clickhouse/events.js';
import { EVENT_COLUMNS } from '../../../packages/server/dist/store/journal-line.js';
import { startClickHouse } from '../../clickhouse/start.mjs';
import { bytesUnder } from '../support/process-memory.mjs';

const DATABASE = 'bench';
/** The segment name the copied rows carry, and the load mark that records the copy as complete. */
const COPY = 'duckdb-copy';

/** DuckDB's value of a ClickHouse events column: booleans as 0/1, JSON as its text. */
const eventColumn = (name) => (EVENT_COLUMNS[name] === 'BOOLEAN' ? `"${name}"::INTEGER` : EVENT_COLUMNS[name] === 'JSON' ? `"${name}"::VARCHAR` : `"${name}"`);

/** A VARCHAR[] as ClickHouse's array text: `['a','b']`, quotes and backslashes escaped. */
const arrayText = (list) => `'[' || array_to_string(list_transform(${list}, x -> '''' || replace(replace(x, '\\', '\\\\'), '''', '\\''') || ''''), ',') || ']'`;

/** A JSON object's top-level keys and each value's JSON text (as splitProperties in tables.ts), as two array texts. */
const splitProperties = (column) => {
  const keys = `coalesce(json_keys("${column}"), [])`;
  // JSON pointers: a key's `~` and `/` escaped.
  const values = `list_transform(${keys}, k -> json_extract("${column}", '/' || replace(replace(k, '~', '~0'), '/', '~1'))::VARCHAR)`;
  return `${arrayText(keys)}, ${arrayText(values)}`;
};

/** The engine's tables beside `events` (src/store/clickhouse/tables.ts), from DuckDB's own. */
const entityTables = (lastSeq) => [
  ['identity_users', 'app_id, user_id, svc_id, segment', `SELECT app_id, user_id, svc_id, '${COPY}' FROM identity_users`],
  ['identity_devices', 'app_id, device_id, svc_id, owner, version, segment', `SELECT app_id, device_id, svc_id, owner, ${lastSeq}, '${COPY}' FROM identity_devices`],
  ['svc_merges', 'from_svc, to_svc, segment', `SELECT from_svc, to_svc, '${COPY}' FROM svc_merges`],
  ['profiles', 'app_id, svc_id, properties, updated_at, version, deleted, segment', `SELECT app_id, svc_id, properties::VARCHAR, updated_at, ${lastSeq}, 0, '${COPY}' FROM profiles`],
  ['profile_versions', 'app_id, svc_id, ingest_seq, properties, segment, property_keys, property_values', `SELECT app_id, svc_id, ingest_seq, properties::VARCHAR, '${COPY}', ${splitProperties('properties')} FROM profile_versions`],
  ['group_profiles', 'app_id, group_type, group_value, properties, updated_at, version, segment', `SELECT app_id, group_type, group_value, properties::VARCHAR, updated_at, ${lastSeq}, '${COPY}' FROM group_profiles`],
  ['held_attributions', 'id, app_id, received_at, event, released, segment', `SELECT id, app_id, received_at, event::VARCHAR, 0, '${COPY}' FROM held_attributions`],
];

async function drained(result) {
  result.stream.resume();
  await new Promise((resolve, reject) => result.stream.on('end', resolve).on('error', reject));
}

/** The figures the copy must keep: row count, sums of the integer columns (time in seconds: milliseconds overflow Int64), JSON text length. */
const CHECK = {
  duckdb: `SELECT count(*)::BIGINT AS n, sum(svc_id)::BIGINT AS svc, sum(ingest_seq)::BIGINT AS seq, sum(time // 1000)::BIGINT AS t, sum(length(event_properties::VARCHAR))::BIGINT AS props FROM events`,
  clickhouse: 'SELECT count() AS n, sum(svc_id) AS svc, sum(ingest_seq) AS seq, sum(intDiv(time, 1000)) AS t, sum(length(event_properties)) AS props FROM events',
};

async function copy(events, duckdbFile, appId, workDir) {
  const instance = await DuckDBInstance.create(duckdbFile);
  const duckdb = await instance.connect();
  const rows = async (sql) => (await duckdb.runAndReadAll(sql)).getRowObjectsJson();
  try {
    const [{ last }] = await rows('SELECT coalesce(max(ingest_seq), 0)::BIGINT AS last FROM events');
    const csv = join(workDir, 'copy.csv');
    const timings = { exportMs: 0, insertMs: 0 };
    const copyTable = async (table, columns, select) => {
      let started = performance.now();
      await duckdb.run(`COPY (${select}) TO '${csv}' (HEADER false, NULLSTR '\\N')`);
      timings.exportMs += performance.now() - started;
      started = performance.now();
      await events.write(async (client) => drained(await client.exec({ query: `INSERT INTO ${table} (${columns}) FORMAT CSV`, values: createReadStream(csv) })));
      timings.insertMs += performance.now() - started;
      rmSync(csv);
    };
    const eventColumns = Object.keys(CLICKHOUSE_EVENT_COLUMNS);
    const where = `WHERE app_id = ${Number(appId)}`;
    const columns = [...eventColumns, 'segment', 'property_keys', 'property_values', 'user_property_keys', 'user_property_values'];
    const select = `SELECT ${eventColumns.map(eventColumn).join(', ')}, '${COPY}', ${splitProperties('event_properties')}, ${splitProperties('user_properties')} FROM events ${where}`;
    await copyTable('events', columns.map((name) => `\`${name}\``).join(', '), select);
    for (const [table, columns, select] of entityTables(Number(last))) await copyTable(table, columns, select);
    // One part per partition, as a long-running server's background merges would leave it.
    const started = performance.now();
    for (const table of ['events', 'user_days', 'user_firsts']) await events.command(`OPTIMIZE TABLE ${table} FINAL`);
    timings.mergeMs = performance.now() - started;
    await events.write((client) => client.insert({ table: 'loaded_segments', values: [{ name: COPY, last_ingest_seq: Number(last), loaded_at: Date.now() }], format: 'JSONEachRow' }));

    const [expected] = await rows(`${CHECK.duckdb} ${where}`);
    const [copied] = await events.query(CHECK.clickhouse);
    for (const [name, value] of Object.entries(expected)) {
      if (String(copied[name]) !== String(value)) throw new Error(`The ClickHouse copy differs: ${name} ${copied[name]} vs ${value} in DuckDB`);
    }
    return { events: Number(expected.n), ...timings };
  } finally {
    duckdb.closeSync();
    instance.closeSync();
  }
}

/**
 * Starts ClickHouse on DIR/clickhouse/server and copies the project's events into it unless
 * a complete copy is there; resolves to its URL and database, the data directory of the
 * server that runs on it (the DuckDB side's tenancy and link secret, a journal of its own),
 * the load figures (undefined when reused) and `stop()`.
 */
export async function openClickHouseCopy({ dataDir, appId }) {
  const root = join(dataDir, 'clickhouse');
  const serverDataDir = join(root, 'svc-data');
  const clickhouse = await startClickHouse({ dir: join(root, 'server') });
  try {
    let events = await ClickHouseEvents.open({ url: clickhouse.url, database: DATABASE });
    const [{ n: complete }] = await events.query(`SELECT count() AS n FROM loaded_segments WHERE name = '${COPY}'`);
    let figures = {};
    if (Number(complete) === 0) {
      // A copy cut short starts over, on an empty database and a server data directory without a journal.
      await events.command(`DROP DATABASE ${DATABASE}`);
      await events.close();
      events = await ClickHouseEvents.open({ url: clickhouse.url, database: DATABASE });
      rmSync(serverDataDir, { recursive: true, force: true });
      const started = performance.now();
      const { events: count, exportMs, insertMs, mergeMs } = await copy(events, join(dataDir, 'events.duckdb'), appId, root);
      figures = { events: count, loadSeconds: (performance.now() - started) / 1000, exportSeconds: exportMs / 1000, insertSeconds: insertMs / 1000, mergeSeconds: mergeMs / 1000 };
    }
    await events.close();
    // Each time: a reused directory's project gets a new secret key.
    mkdirSync(serverDataDir, { recursive: true });
    for (const file of ['tenancy.json', 'link-secret']) if (existsSync(join(dataDir, file))) copyFileSync(join(dataDir, file), join(serverDataDir, file));
    return { url: clickhouse.url, database: DATABASE, dir: root, serverDataDir, dataBytes: () => bytesUnder(join(root, 'server', 'data', 'data', DATABASE)), pid: clickhouse.pid, ...figures, stop: clickhouse.stop };
  } catch (error) {
    await clickhouse.stop();
    throw error;
  }
}
