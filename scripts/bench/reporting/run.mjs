// Reporting benchmark: a seeded dataset (default 10 million events, 30 days, 200,000 users)
// loaded through the journal loader into a fresh data directory, then each reporting
// operation timed through the server's HTTP path (warm: median of 5 and p95) next to the
// same question asked as hand-written SQL on the same DuckDB file, with their ratio; then
// the longest event-loop stall of the server (in a process of its own) while queries run and
// ingestion continues.
// On ClickHouse (--engine clickhouse or both): the same events, as resolved in the DuckDB
// file (svc_id, ingest_seq), copied into a private ClickHouse server (clickhouse-copy.mjs;
// its load time printed), then the same operations through a server on ClickHouse
// (PostgreSQL for the other entities) next to hand-written ClickHouse SQL; one table prints
// both engines side by side.
// The server runs with the documented limits raised (the benchmark's queries would exceed
// the cost budget); --keep DIR keeps the loaded data directory (the ClickHouse copy in
// DIR/clickhouse) and reuses it next time. The stall phase ingests into a throwaway copy of
// each engine's data, so a kept dataset stays as loaded.
//   node scripts/bench/reporting/run.mjs [--engine duckdb|clickhouse|both] [--events 10000000] [--users 200000] [--runs 5] [--keep DIR] [--only NAME] [--stall-only | --no-stall] [--stall-flags FLAGS] [--engine-nice idle|N] [--clients-nice idle|N]
// --only runs the operations whose name contains NAME; --stall-only skips their timing and
// measures only the event-loop stalls, --no-stall skips the stalls; --stall-flags adds Node flags to the stall phase's server
// (--stall-flags="--cpu-prof --trace-gc"); --engine-nice sets the server's engineNice (the
// engine process's priority below the server's: idle or a niceness); --clients-nice sets the
// priority of the stall phase's ingestion client, a process of its own: idle by default
// (SCHED_IDLE, as if it ran on another machine, as a server's clients usually do: it gets the
// CPU time the server leaves), or a niceness (0: it takes the server's CPUs as a client on
// the same machine does).
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fork, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startServer, Tenancy } from '../../../packages/server/dist/index.js';
import { startClickHouse } from '../../clickhouse/start.mjs';
import { startPostgres } from '../../postgres/start.mjs';
import { bytesUnder, childrenRunning, memory } from '../support/process-memory.mjs';
import { serverFlags, withServerFlags } from '../support/server-flags.mjs';
import { openClickHouseCopy } from './clickhouse-copy.mjs';
import { loadEvents, random } from '../support/seeded-load.mjs';

// The server runs in this process: with the Node flags it runs with on its own.
withServerFlags();

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '10000000' },
    users: { type: 'string', default: '200000' },
    runs: { type: 'string', default: '5' },
    keep: { type: 'string' },
    only: { type: 'string', default: '' },
    engine: { type: 'string', default: 'both' },
    'stall-only': { type: 'boolean', default: false },
    'no-stall': { type: 'boolean', default: false },
    'stall-flags': { type: 'string', default: '' },
    'engine-nice': { type: 'string' },
    'clients-nice': { type: 'string', default: 'idle' },
  },
});
if (!['duckdb', 'clickhouse', 'both'].includes(values.engine)) throw new Error('--engine is duckdb, clickhouse or both');
const ENGINES = values.engine === 'both' ? ['duckdb', 'clickhouse'] : [values.engine];
/** A priority option's value: idle, or a niceness. */
const lowering = (value) => (value === 'idle' ? value : Number(value));
const engineNice = values['engine-nice'] === undefined ? {} : { engineNice: lowering(values['engine-nice']) };
const EVENTS = Number(values.events);
const USERS = Number(values.users);
const RUNS = Number(values.runs);
const DAYS = 30;
const DAY = 86_400_000;
const START = Date.UTC(2026, 9, 1);
const EVENT_TYPES = ['Song Played', 'Add to Cart', 'Checkout', 'Purchase', 'Search', 'View Item', 'Share', 'Like', 'Follow', 'Comment', 'Login', 'Logout', 'Open App', 'Close App', 'Rate', 'Subscribe', 'Unsubscribe', 'Invite', 'Upload', 'Download'];
const COUNTRIES = ['United States', 'Germany', 'France', 'India', 'Brazil', 'Japan', 'Canada', 'Spain', 'Italy', 'Mexico'];

const dataDir = values.keep ?? mkdtempSync(join(tmpdir(), 'svc-bench-reporting-'));
mkdirSync(dataDir, { recursive: true });
const reuse = existsSync(join(dataDir, 'events.duckdb'));
const tenancy = new Tenancy(dataDir);
// The server keeps only a hash of the secret key: a kept directory's project gets a new one.
const project = reuse ? tenancy.rotateSecret(tenancy.projects[0].app_id, 0) : tenancy.createProject(tenancy.createOrganization('Bench').id, 'Bench');

function load() {
  const next = random(42);
  return loadEvents(dataDir, EVENTS, (i) => {
    const user = Math.floor(next() ** 1.5 * USERS);
    const time = START + Math.floor(next() * DAYS * DAY);
    // Funnel-shaped: most users' events follow View Item → Add to Cart → Purchase now and then.
    const type = next() < 0.3 ? ['View Item', 'Add to Cart', 'Purchase'][Math.floor(next() ** 2 * 3)] : EVENT_TYPES[Math.floor(next() * EVENT_TYPES.length)];
    return {
      app_id: project.app_id,
      insert_id: `b-${i}`,
      event_type: type,
      user_id: `user-${user}`,
      device_id: `device-${user}`,
      time,
      server_upload_time: time,
      session_id: time - (time % 1_800_000),
      event_properties: { item_id: `sku-${Math.floor(next() * 500)}`, price_tier: Math.floor(next() * 4) },
      country: COUNTRIES[user % COUNTRIES.length],
      platform: user % 3 === 0 ? 'iOS' : 'Android',
      app_version: `1.${user % 7}`,
      skip_user_properties_sync: false,
    };
  });
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

async function time(run, afterWarmUp = async () => undefined) {
  await run(); // warm-up
  await afterWarmUp();
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p95: percentile(times, 95) };
}

const loadSeconds = reuse ? undefined : await load();
console.log(
  `dataset: ${EVENTS.toLocaleString()} events, ${USERS.toLocaleString()} users, ${DAYS} days; ${loadSeconds === undefined ? `reused ${dataDir}` : `loaded through the journal loader in ${loadSeconds.toFixed(0)} s (${((loadSeconds * 1e6) / EVENTS).toFixed(1)} µs/event, generation included)`}`,
);

// A query of the 10M-event dataset can outlast the 30 s idle cut-off on a busy machine.
const patient = { idleMs: 600_000, requestMs: 600_000 };
const unlimited = { concurrentRequests: 1000, costPerFiveMinutes: Number.MAX_SAFE_INTEGER, costPerHour: Number.MAX_SAFE_INTEGER };
const auth = { authorization: `Basic ${Buffer.from(`${project.api_key}:${project.secret_key}`).toString('base64')}` };
const range = 'start=20261001&end=20261030';
const e = (spec) => encodeURIComponent(JSON.stringify(spec));
const inRange = `app_id = ${project.app_id} AND time >= ${START} AND time < ${START + DAYS * DAY}`;
/** The UTC day of an epoch-ms column, in each engine's SQL. */
const dayOf = { duckdb: (column) => `date_trunc('day', make_timestamp(${column} * 1000))`, clickhouse: (column) => `toDate(toDateTime(intDiv(${column}, 1000), 'UTC'))` };
const day = { duckdb: dayOf.duckdb('time'), clickhouse: dayOf.clickhouse('time') };
const sessionsInRange = `app_id = ${project.app_id} AND session_id >= ${START} AND session_id < ${START + DAYS * DAY}`;
const FUNNEL_WINDOW = DAY;
const itemIdText = `visitParamExtractString(concat('{"k":', property_values[indexOf(property_keys, 'item_id')], '}'), 'k')`;

/**
 * Distinct users per day and over the range, from `rows` (d, svc_id): the rows materialized
 * once and grouped twice, DuckDB's fastest form (GROUPING SETS with a distinct count take a
 * quarter more CPU; the source read twice extracts its JSON twice).
 */
const perDayAndWhole = (rows) => `WITH s AS MATERIALIZED (${rows}) SELECT d, count(DISTINCT svc_id) AS users FROM s GROUP BY d UNION ALL SELECT NULL, count(DISTINCT svc_id) FROM s`;

/**
 * The `top` groups `g` with the most distinct users over the range (ties at the last place
 * included), with their distinct users per day: the range's counts first, then the per-day
 * counts of those groups only.
 */
const topPerDayAndWhole = (rows, top) =>
  `WITH s AS MATERIALIZED (${rows}), w AS MATERIALIZED (SELECT g, count(DISTINCT svc_id) AS n FROM s GROUP BY g),
  k AS (SELECT g FROM w WHERE n >= coalesce((SELECT n FROM w ORDER BY n DESC LIMIT 1 OFFSET ${top - 1}), 0))
  SELECT d, s.g, count(DISTINCT svc_id) FROM s SEMI JOIN k ON s.g IS NOT DISTINCT FROM k.g GROUP BY d, s.g UNION ALL SELECT NULL, g, n FROM w`;

/**
 * Whether a funnel answer has these counts, medians and averages (`r<k>`, `m<k>`, `a<k>`) per
 * day and over the range (day 'range'): true, or the first day that differs.
 */
function funnelAgrees(answer, rowsByDay) {
  const [element] = answer.data;
  const byDay = new Map(rowsByDay);
  const counts = (row) => (row ? [[row.r0, row.r1, row.r2], [row.m0, row.m1, row.m2], [row.a0, row.a1, row.a2]].map((values) => values.map((v) => Math.round(Number(v ?? 0)))) : [[0, 0, 0], [0, 0, 0], [0, 0, 0]]);
  const expected = [['range', [element.cumulativeRaw, element.medianTransTimes, element.avgTransTimes]], ...element.dayFunnels.xValues.map((day, i) => [day, [element.dayFunnels.series[i], element.dayMedianTransTimes.series[i], element.dayAvgTransTimes.series[i]]])];
  if (byDay.size > expected.length) return `${byDay.size} days, the endpoint has ${expected.length}`;
  const differing = expected.find(([day, values]) => JSON.stringify(counts(byDay.get(day))) !== JSON.stringify(values));
  return differing === undefined || `${differing[0]}: the endpoint's ${JSON.stringify(differing[1])}, the hand SQL's ${JSON.stringify(counts(byDay.get(differing[0])))}`;
}

const COHORT_DAY = new Intl.DateTimeFormat('en-US', { month: 'short', day: '2-digit', timeZone: 'UTC' });

/**
 * Whether a retention answer has the hand SQL's users per cohort day `c` (days since 1970) and
 * column `n` (-1: the cohort's users): true, or the first cell that differs. Columns after now
 * are not in the answer; every other cell it has must be a row's (or 0).
 */
function retentionAgrees(answer, rows) {
  const { values } = answer.data.series[0];
  const counts = new Map(rows.map((row) => [`${COHORT_DAY.format(Number(row.c) * DAY)}/${Number(row.n) + 1}`, Number(row.users)]));
  for (const [label, cells] of Object.entries(values)) {
    const differing = cells.findIndex((cell, i) => cell.count !== (counts.get(`${label}/${i}`) ?? 0));
    if (differing >= 0) return `${label}[${differing}]: the endpoint's ${cells[differing].count}, the hand SQL's ${counts.get(`${label}/${differing}`) ?? 0}`;
  }
  return true;
}

/**
 * Whether a users answer has the hand SQL's users per day (`d`, a date or timestamp; the row of
 * the whole range left out): true, or the first day that differs.
 */
function perDayAgrees(answer, rows) {
  // DuckDB's rows hold the day as a Date, ClickHouse's as its text.
  const label = (d) => (d instanceof Date ? d.toISOString() : String(d)).slice(0, 10);
  const counts = new Map(rows.filter((row) => row.d !== null && row.d !== '0000-00-00').map((row) => [label(row.d), Number(row.users)]));
  const { xValues, series } = answer.data;
  const differing = xValues.findIndex((day, i) => (counts.get(day) ?? 0) !== series[0][i]);
  return differing < 0 || `${xValues[differing]}: the endpoint's ${series[0][differing]}, the hand SQL's ${counts.get(xValues[differing]) ?? 0}`;
}

/** Whether a composition answer has the hand SQL's users per value: true, or the first value that differs. */
function compositionAgrees(answer, rows) {
  const counts = new Map(rows.map((row) => [row.c, Number(row.users)]));
  const { xValues, series } = answer.data;
  if (counts.size !== xValues.length) return `${counts.size} values, the endpoint has ${xValues.length}`;
  const differing = xValues.findIndex((value, i) => counts.get(value) !== series[0][i]);
  return differing < 0 || `${xValues[differing]}: the endpoint's ${series[0][differing]}, the hand SQL's ${counts.get(xValues[differing])}`;
}

// Each operation, then the same question as hand-written SQL for each engine: per day and over
// the whole range (`seriesCollapsed`). ClickHouse 18.16 has no GROUPING SETS, no common table
// expressions and no joins on inequalities: totals come from WITH TOTALS or a second GROUP BY,
// the funnel from each user's arrays of step times.
const allCases = [
  {
    name: 'segmentation uniques/day',
    path: `/api/2/events/segmentation?${range}&e=${e({ event_type: 'Song Played' })}`,
    duckdb: perDayAndWhole(`SELECT ${day.duckdb} AS d, svc_id FROM events WHERE ${inRange} AND event_type = 'Song Played'`),
    clickhouse: `SELECT ${day.clickhouse} AS d, uniqExact(svc_id) FROM events WHERE ${inRange} AND event_type = 'Song Played' GROUP BY d WITH TOTALS`,
  },
  {
    name: 'segmentation by item_id, top 100',
    path: `/api/2/events/segmentation?${range}&e=${e({ event_type: 'Song Played', group_by: [{ type: 'event', value: 'item_id' }] })}&limit=100`,
    duckdb: topPerDayAndWhole(`SELECT ${day.duckdb} AS d, event_properties->>'item_id' AS g, svc_id FROM events WHERE ${inRange} AND event_type = 'Song Played'`, 100),
    // The value from the split property columns (visitParam on event_properties would find the
    // key at any depth: another question), unescaped as a JSON string.
    clickhouse: `SELECT d, g, n FROM (SELECT ${day.clickhouse} AS d, ${itemIdText} AS g, uniqExact(svc_id) AS n FROM events WHERE ${inRange} AND event_type = 'Song Played' GROUP BY d, g)
     UNION ALL SELECT toDate(0) AS d, g, n FROM (SELECT ${itemIdText} AS g, uniqExact(svc_id) AS n FROM events WHERE ${inRange} AND event_type = 'Song Played' GROUP BY g)`,
  },
  {
    name: '3-step funnel (1 day window)',
    path: `/api/2/funnels?${range}&e=${e({ event_type: 'View Item' })}&e=${e({ event_type: 'Add to Cart' })}&e=${e({ event_type: 'Purchase' })}&cs=86400`,
    // The endpoint's question: every entry's path (the first Add to Cart at or after it, then that
    // one's first Purchase; same-time events count in step order), steps within the window; per user
    // and entry day the furthest, then earliest path; per user the best of those. Each path is one
    // number that sorts as that rule does and carries the step times (depth | 2^42 - entry time |
    // cart - entry | purchase - cart), so the winners are plain max(). One row per day and one for the range.
    // `s` unmaterialized: each reader scans the events again with its event type pushed down (faster here).
    duckdb: `WITH s AS NOT MATERIALIZED (SELECT svc_id, time, event_type FROM events WHERE app_id = ${project.app_id} AND time >= ${START} AND time < ${START + DAYS * DAY + FUNNEL_WINDOW}
       AND event_type IN ('View Item', 'Add to Cart', 'Purchase')),
     carts AS (SELECT c.svc_id, c.time AS t1, p.time AS t2 FROM s c ASOF LEFT JOIN (SELECT svc_id, time FROM s WHERE event_type = 'Purchase') p ON p.svc_id = c.svc_id AND p.time >= c.time
       WHERE c.event_type = 'Add to Cart'),
     paths AS (SELECT v.svc_id, v.time AS t0, coalesce(c.t1 <= v.time + ${FUNNEL_WINDOW}, false) AS carted, coalesce(c.t2 <= v.time + ${FUNNEL_WINDOW}, false) AS bought,
         CASE WHEN carted THEN c.t1 - v.time ELSE 0 END AS d1, CASE WHEN bought THEN c.t2 - c.t1 ELSE 0 END AS d2
       FROM s v ASOF LEFT JOIN carts c ON c.svc_id = v.svc_id AND c.t1 >= v.time WHERE v.event_type = 'View Item' AND v.time < ${START + DAYS * DAY}),
     day_best AS (SELECT svc_id, t0 // ${DAY} AS day, max(((1 + carted::INT + bought::INT)::HUGEINT << 112) | ((${2 ** 42} - t0)::HUGEINT << 70) | (d1::HUGEINT << 35) | d2) AS key
       FROM paths GROUP BY ALL),
     winners AS (SELECT day, key FROM day_best UNION ALL SELECT NULL, max(key) FROM day_best GROUP BY svc_id)
     SELECT day, count(*) AS r0, count(*) FILTER (WHERE depth > 1) AS r1, count(*) FILTER (WHERE depth > 2) AS r2,
       median(d1) FILTER (WHERE depth > 1) AS m1, median(d2) FILTER (WHERE depth > 2) AS m2, median(d1 + d2) FILTER (WHERE depth > 2) AS m0,
       avg(d1) FILTER (WHERE depth > 1) AS a1, avg(d2) FILTER (WHERE depth > 2) AS a2, avg(d1 + d2) FILTER (WHERE depth > 2) AS a0
     FROM (SELECT day, (key >> 112)::INT AS depth, ((key >> 35) & ${2 ** 35 - 1})::BIGINT AS d1, (key & ${2 ** 35 - 1})::BIGINT AS d2 FROM winners) GROUP BY day`,
    // Whether the endpoint's answer has the hand SQL's counts, medians and averages per day and over the range.
    agrees: {
      duckdb: (answer, rows) => funnelAgrees(answer, rows.map((row) => [row.day === null ? 'range' : new Date(Number(row.day) * DAY).toISOString().slice(0, 10), row])),
      // The range's row is d = toDate(0), which 18.16 prints as 0000-00-00.
      clickhouse: (answer, rows) =>
        funnelAgrees(answer, rows.map((row) => [row.d === '0000-00-00' ? 'range' : row.d, {
          r0: row.viewed, r1: row.carted, r2: row.bought, m0: row.median_whole, m1: row.median_view_cart, m2: row.median_cart_buy, a0: row.avg_whole, a1: row.avg_view_cart, a2: row.avg_cart_buy,
        }])),
    },
    // The endpoint's question: every View Item in the range may enter; from each, the first Add to
    // Cart at or after it, then the first Purchase at or after that (a later step at the same
    // instant counts as after); a user's winning entry per day and over the range is the furthest,
    // then the earliest; per entry day and over the range (d = 0): users per step, median
    // (interpolated) and average times of each step and of the whole funnel. Each entry's path reads
    // its user's sorted arrays of step times; the rows per entry come from arrayJoin. Every column
    // a lambda reads is read by the query outside too: 18.16 otherwise drops it from the subquery.
    clickhouse: `SELECT d, viewed, carted, bought, median_view_cart, avg_view_cart, median_cart_buy, avg_cart_buy, median_whole, avg_whole FROM (
     SELECT d, count() AS viewed, countIf(depth >= 2) AS carted, countIf(depth = 3) AS bought,
       ${[['view_cart', 't1 - t0', 'depth >= 2'], ['cart_buy', 't2 - t1', 'depth = 3'], ['whole', 't2 - t0', 'depth = 3']]
         .map(([name, value, condition]) => `arraySort(groupArrayIf(${value}, ${condition})) AS s_${name}, (s_${name}[intDiv(length(s_${name}) + 1, 2)] + s_${name}[intDiv(length(s_${name}), 2) + 1]) / 2 AS median_${name}, avgIf(${value}, ${condition}) AS avg_${name}`)
         .join(',\n       ')}
     FROM (SELECT tupleElement(x, 1) AS d, tupleElement(x, 2) AS t0, tupleElement(x, 3) AS t1, tupleElement(x, 4) AS t2, tupleElement(x, 5) AS depth
       FROM (SELECT arrayReverseSort(w -> tuple(tupleElement(w, 5), -tupleElement(w, 2)), days_best)[1] AS best,
           arrayJoin(arrayPushFront(days_best, tuple(toDate(0), tupleElement(best, 2), tupleElement(best, 3), tupleElement(best, 4), tupleElement(best, 5)))) AS x
         FROM (SELECT svc_id, groupArray(tuple(d, tupleElement(b, 1), tupleElement(b, 2), tupleElement(b, 3), tupleElement(b, 4))) AS days_best
           FROM (SELECT svc_id, toDate(toDateTime(intDiv(t0, 1000), 'UTC')) AS d, argMax(tuple(t0, t1, t2, depth), depth * 10000000000000 - t0) AS b
             FROM (SELECT svc_id, t0, arrayFirst(x -> x >= t0, carts) AS t1, arrayFirst(x -> x >= t1, buys) AS t2,
                 1 + (t1 >= t0 AND t1 <= t0 + ${FUNNEL_WINDOW}) + (t1 >= t0 AND t2 >= t1 AND t2 <= t0 + ${FUNNEL_WINDOW}) AS depth
               FROM (SELECT svc_id, arrayJoin(views) AS t0, carts, buys FROM (
                 SELECT svc_id, groupArrayIf(time, event_type = 'View Item' AND time < ${START + DAYS * DAY}) AS views,
                   arraySort(groupArrayIf(time, event_type = 'Add to Cart')) AS carts, arraySort(groupArrayIf(time, event_type = 'Purchase')) AS buys
                 FROM events WHERE app_id = ${project.app_id} AND svc_id IS NOT NULL AND time >= ${START} AND time < ${START + DAYS * DAY + FUNNEL_WINDOW}
                   AND event_type IN ('View Item', 'Add to Cart', 'Purchase') GROUP BY svc_id HAVING length(views) > 0)))
             GROUP BY svc_id, d)
           GROUP BY svc_id)))
     GROUP BY d) ORDER BY d`,
  },
  {
    name: 'active users/day',
    path: `/api/2/users?${range}`,
    duckdb: perDayAndWhole(`SELECT ${day.duckdb} AS d, svc_id FROM events WHERE ${inRange} AND event_type NOT IN ('$identify', '$groupidentify')`),
    clickhouse: `SELECT ${day.clickhouse} AS d, uniqExact(svc_id) AS users FROM events WHERE ${inRange} AND event_type NOT IN ('$identify', '$groupidentify') GROUP BY d WITH TOTALS`,
    agrees: { duckdb: perDayAgrees, clickhouse: perDayAgrees },
  },
  {
    name: 'new users/day',
    path: `/api/2/users?${range}&m=new`,
    // Users whose first event ever (any type) is in the range, per day of it.
    duckdb: perDayAndWhole(`SELECT ${dayOf.duckdb('f')} AS d, svc_id FROM (SELECT svc_id, min(time) AS f FROM events WHERE app_id = ${project.app_id} AND svc_id IS NOT NULL GROUP BY svc_id)
      WHERE f >= ${START} AND f < ${START + DAYS * DAY}`),
    clickhouse: `SELECT ${dayOf.clickhouse('f')} AS d, count() AS users FROM (SELECT svc_id, min(time) AS f FROM events WHERE app_id = ${project.app_id} AND svc_id IS NOT NULL GROUP BY svc_id)
      WHERE f >= ${START} AND f < ${START + DAYS * DAY} GROUP BY d WITH TOTALS`,
    agrees: { duckdb: perDayAgrees, clickhouse: perDayAgrees },
  },
  {
    name: 'composition by country',
    path: `/api/2/composition?${range}&p=country`,
    // The endpoint's question: active users by the country of their latest active event in the range (time, then ingestion order).
    duckdb: `SELECT c, count(*) AS users FROM (SELECT svc_id, arg_max(coalesce(country, '(none)'), (time, ingest_seq)) AS c FROM events
       WHERE ${inRange} AND svc_id IS NOT NULL AND event_type NOT IN ('$identify', '$groupidentify') GROUP BY svc_id) GROUP BY c`,
    // 18.16: the pair as one Decimal128 (argMax over a tuple took twice as long).
    clickhouse: `SELECT c, count() AS users FROM (SELECT svc_id, argMax(ifNull(country, '(none)'), toDecimal128(time, 0) * 1000000000000000000 + ingest_seq) AS c FROM events
       WHERE ${inRange} AND svc_id IS NOT NULL AND event_type NOT IN ('$identify', '$groupidentify') GROUP BY svc_id) GROUP BY c`,
    agrees: Object.fromEntries(['duckdb', 'clickhouse'].map((engine) => [engine, compositionAgrees])),
  },
  {
    name: 'session length distribution',
    path: `/api/2/sessions/length?${range}`,
    duckdb: `SELECT count(*) FILTER (WHERE l < 60000), count(*) FILTER (WHERE l >= 60000) FROM (SELECT svc_id, session_id, least(max(time) - session_id, ${DAY}) AS l FROM events
     WHERE ${sessionsInRange} GROUP BY svc_id, session_id HAVING bool_or(event_type NOT IN ('$identify', '$groupidentify')))`,
    // Grouped by non-Nullable keys: 18.16 groups by Nullable columns several times slower (over 30 s here, 17 s this way).
    clickhouse: `SELECT countIf(l < 60000), countIf(l >= 60000) FROM (SELECT least(max(time) - sid, ${DAY}) AS l FROM (
       SELECT assumeNotNull(svc_id) AS s, assumeNotNull(session_id) AS sid, time, event_type FROM events WHERE ${sessionsInRange})
     GROUP BY s, sid HAVING countIf(event_type NOT IN ('$identify', '$groupidentify')) > 0)`,
  },
  {
    name: 'retention n-day/day (Open App, then Song Played)',
    path: `/api/2/retention?${range}&se=${e({ event_type: 'Open App' })}&re=${e({ event_type: 'Song Played' })}`,
    // The endpoint's question: each user's first Open App in the range makes the cohort (its day);
    // per later day n (up to 29) the users with a Song Played that day, at or after that first Open
    // App (read up to 30 days after the range). Per user and day the latest Song Played decides.
    duckdb: `WITH st AS (SELECT svc_id, min(time) AS t0 FROM events WHERE ${inRange} AND svc_id IS NOT NULL AND event_type = 'Open App' GROUP BY svc_id),
     rt AS (SELECT svc_id, time // ${DAY} AS k, max(time) AS last_time FROM events WHERE app_id = ${project.app_id} AND time >= ${START} AND time < ${START + 2 * DAYS * DAY}
       AND svc_id IS NOT NULL AND event_type = 'Song Played' GROUP BY ALL)
     SELECT t0 // ${DAY} AS c, -1 AS n, count(*) AS users FROM st GROUP BY c
     UNION ALL SELECT t0 // ${DAY} AS c, k - t0 // ${DAY} AS n, count(*) AS users FROM st JOIN rt USING (svc_id) WHERE last_time >= t0 AND k - t0 // ${DAY} < ${DAYS} GROUP BY ALL`,
    clickhouse: `SELECT intDiv(t0, ${DAY}) AS c, toInt64(-1) AS n, count() AS users FROM (SELECT svc_id, min(time) AS t0 FROM events WHERE ${inRange} AND svc_id IS NOT NULL AND event_type = 'Open App' GROUP BY svc_id) GROUP BY c
     UNION ALL SELECT intDiv(t0, ${DAY}) AS c, k - intDiv(t0, ${DAY}) AS n, count() AS users
     FROM (SELECT svc_id, min(time) AS t0 FROM events WHERE ${inRange} AND svc_id IS NOT NULL AND event_type = 'Open App' GROUP BY svc_id)
     ALL INNER JOIN (SELECT svc_id, intDiv(time, ${DAY}) AS k, max(time) AS last_time FROM events WHERE app_id = ${project.app_id} AND time >= ${START} AND time < ${START + 2 * DAYS * DAY}
       AND svc_id IS NOT NULL AND event_type = 'Song Played' GROUP BY svc_id, k) USING (svc_id)
     WHERE last_time >= t0 AND k - intDiv(t0, ${DAY}) < ${DAYS} GROUP BY c, n`,
    agrees: Object.fromEntries(['duckdb', 'clickhouse'].map((engine) => [engine, retentionAgrees])),
  },
  {
    name: 'event types list',
    path: '/api/2/events/list',
    duckdb: `SELECT event_type, count(*) FROM events WHERE app_id = ${project.app_id} GROUP BY event_type`,
    clickhouse: `SELECT event_type, count() FROM events WHERE app_id = ${project.app_id} GROUP BY event_type`,
  },
];

const cases = allCases.filter(({ name }) => name.includes(values.only));

/** The PostgreSQL and ClickHouse servers of the ClickHouse side, and its server config; stopped by `stop()`. */
async function clickHouseSide() {
  const postgres = await startPostgres();
  try {
    const copy = await openClickHouseCopy({ dataDir, appId: project.app_id });
    console.log(
      copy.loadSeconds === undefined
        ? `ClickHouse: reused the copy in ${copy.dir}`
        : `ClickHouse: ${copy.events.toLocaleString()} events (and identities) copied from the DuckDB file in ${copy.loadSeconds.toFixed(1)} s (${((copy.loadSeconds * 1e6) / copy.events).toFixed(2)} µs/event; DuckDB's CSV export ${copy.exportSeconds.toFixed(1)} s, ClickHouse's insert ${copy.insertSeconds.toFixed(1)} s, OPTIMIZE FINAL ${copy.mergeSeconds.toFixed(1)} s)`,
    );
    const config = { dataDir: copy.serverDataDir, engine: 'clickhouse', clickhouseUrl: copy.url, clickhouseDatabase: copy.database, postgresUrl: postgres.url };
    /** The copy's ClickHouse files (copied at rest: its server stops) and server data directory, a ClickHouse server on them. */
    const scratch = async () => {
      await copy.stop();
      const dir = scratchDir();
      cpSync(join(copy.dir, 'server'), join(dir, 'server'), { recursive: true });
      cpSync(copy.serverDataDir, join(dir, 'svc-data'), { recursive: true });
      const clickhouse = await startClickHouse({ dir: join(dir, 'server') });
      const remove = async () => {
        await clickhouse.stop();
        rmSync(dir, { recursive: true, force: true });
      };
      return { config: { ...config, dataDir: join(dir, 'svc-data'), clickhouseUrl: clickhouse.url }, remove };
    };
    return { config, scratch, dataBytes: copy.dataBytes, storagePid: copy.pid, stop: () => Promise.all([copy.stop(), postgres.stop()]) };
  } catch (error) {
    await postgres.stop();
    throw error;
  }
}

/** Each case's timings through the HTTP path and as hand-written SQL on this engine. */
async function measure(engine, { config, dataBytes, storagePid }, timed) {
  // item_id as a deployment that has grouped by it before has it: materialized (DuckDB).
  const server = await startServer({ ...config, ...engineNice, materializedProperties: ['item_id'], host: '127.0.0.1', port: 0, logger: false, reportingLimits: unlimited, connectionLimits: patient });
  const get = async (path) => {
    const answer = await fetch(`${server.urls.app}${path}`, { headers: auth });
    if (answer.status !== 200) throw new Error(`${path}: ${answer.status} ${await answer.text()}`);
    return answer.json();
  };
  const results = new Map();
  try {
    // Funnels are SQL until the engine's timelines, built in the background at open, are ready.
    const building = performance.now();
    await server.store.timelinesBuilt();
    console.log(`${engine}: timelines built ${((performance.now() - building) / 1000).toFixed(1)} s after the server started`);
    await server.store.propertiesMaterialized();
    console.log(`${engine}: item_id materialized ${((performance.now() - building) / 1000).toFixed(1)} s after the server started (at once when a run before did it)`);
    const [{ n: stored }] = await server.store.query(`SELECT count(*) AS n FROM events WHERE app_id = ${project.app_id}`);
    console.log(`${engine}: ${Number(stored).toLocaleString()} events stored`);
    for (const testCase of timed) {
      try {
        let answer;
        let rows;
        // A first question may start work in the background (ClickHouse builds the local days of
        // a zone first asked in): the timed runs come after it.
        const settled = async () => {
          const started = performance.now();
          await server.store.timelinesBuilt();
          const seconds = (performance.now() - started) / 1000;
          if (seconds >= 0.1) console.log(`${engine}: ${testCase.name}: background work after the first question took ${seconds.toFixed(1)} s`);
        };
        const api = await time(async () => (answer = await get(testCase.path)), settled);
        const raw = await time(async () => (rows = await server.store.query(testCase[engine])));
        results.set(testCase.name, { api, raw, answer: JSON.stringify(answer), agrees: testCase.agrees?.[engine]?.(answer, rows) });
      } catch (error) {
        results.set(testCase.name, { error: error.message.replace(/\s+/g, ' ').slice(0, 300) });
      }
    }
    // Peaks since each process started: the engine's with this server, ClickHouse's since the copy's server started.
    const [enginePid] = childrenRunning(process.pid, 'engine-child');
    const mb = (pid) => `${(memory(pid)?.hwm ?? 0).toFixed(0)} MB`;
    console.log(`${engine}: disk ${(dataBytes() / 2 ** 20).toFixed(0)} MB; peak resident memory (VmHWM): this process (the benchmark and the server) ${mb(process.pid)}, engine process ${mb(enginePid)}${storagePid ? `, ClickHouse ${mb(storagePid)}` : ''}`);
    if (engine === 'clickhouse') {
      // What is kept per user at load grows with users and their days, not with events.
      const kept = await server.store.query(`SELECT table, sum(rows) AS rows, sum(bytes_on_disk) AS bytes FROM system.parts WHERE active AND database = currentDatabase()
        AND table IN ('events', 'user_days', 'user_firsts', 'user_summaries', 'user_local_days') GROUP BY table ORDER BY table`);
      console.log(`clickhouse: rows kept: ${kept.map((row) => `${row.table} ${Number(row.rows).toLocaleString()} (${(Number(row.bytes) / 2 ** 20).toFixed(0)} MB)`).join(', ')}`);
    }
  } finally {
    await server.close();
  }
  return results;
}

const scratchDir = () => mkdtempSync(join(tmpdir(), 'svc-bench-stall-'));

/** A throwaway copy of the DuckDB side's data directory (without the ClickHouse copy in it). */
async function duckDbScratch() {
  const dir = scratchDir();
  cpSync(dataDir, dir, { recursive: true, filter: (source) => resolve(source) !== resolve(dataDir, 'clickhouse') });
  return { config: { dataDir: dir }, remove: async () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * The event loop while queries run and ingestion continues, in a server process of its own
 * (this one holds the benchmark's garbage): each stall over 20 ms is listed with the garbage
 * collection inside it, so a stall is told apart as GC or work. It runs on a throwaway copy
 * of the engine's data (`scratch()`), where the ingestion goes to a project of its own.
 */
async function stallPhase(engine, scratch) {
  const started = performance.now();
  const { config, remove } = await scratch();
  console.log(`\n${engine}: the stall phase runs on a throwaway copy of the data (copied in ${((performance.now() - started) / 1000).toFixed(1)} s)`);
  try {
    await watchStalls(engine, config);
  } finally {
    await remove();
  }
}

async function watchStalls(engine, config) {
  const scratchTenancy = new Tenancy(config.dataDir);
  const live = scratchTenancy.projects.find((p) => p.name === 'Live') ?? scratchTenancy.createProject(project.org_id, 'Live');
  const stallServer = fork(fileURLToPath(new URL('./stall-server.mjs', import.meta.url)), [JSON.stringify({ ...config, ...engineNice })], { execArgv: [...serverFlags(), ...values['stall-flags'].split(/\s+/).filter(Boolean)] });
  const { urls } = await new Promise((resolve) => stallServer.once('message', resolve));
  const clientsNice = lowering(values['clients-nice']);
  const [launcher, ...lowered] = clientsNice === 'idle' ? ['chrt', '--idle', '0'] : ['nice', '-n', String(clientsNice)];
  const ingestClient = spawn(launcher, [...lowered, process.execPath, fileURLToPath(new URL('./ingest-client.mjs', import.meta.url)), JSON.stringify({ url: urls.ingest, apiKey: live.api_key, run: `live-${Date.now()}` })], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  stallServer.send('watch');
  // When each query ran, in seconds from the start of the watch: to tell which one a stall met.
  const watched = performance.now();
  const seconds = () => ((performance.now() - watched) / 1000).toFixed(2);
  const queried = [];
  for (const { name, path } of cases) {
    const from = seconds();
    await fetch(`${urls.app}${path}`, { headers: auth }).then((answer) => answer.arrayBuffer());
    queried.push(`${name} ${from}-${seconds()}`);
  }
  const ingested = new Promise((resolve) => ingestClient.once('message', resolve));
  ingestClient.send('stop');
  const { batches, accepted } = await ingested;
  const report = new Promise((resolve) => stallServer.once('message', resolve));
  // The server closes after its report: its data may only be removed once it has exited.
  const exited = new Promise((resolve) => stallServer.once('exit', resolve));
  stallServer.send('report');
  const { maxMs, p99Ms, stalls, ownMaxMs, longest, longestOwn, heapMb } = await report;
  await exited;
  console.log(`\n${engine}: event loop of the server process during the queries, with ${batches} ingestion batches of 500 in between (${accepted} accepted; the client ${clientsNice === 'idle' ? 'idle' : `at niceness ${clientsNice}`}): max stall ${maxMs.toFixed(1)} ms, p99 ${p99Ms.toFixed(1)} ms; heap ${heapMb.toFixed(0)} MB`);
  const described = (list) => list.map((stall) => `${stall.ms.toFixed(0)} at ${stall.atS.toFixed(2)} s: ${stall.gcMs.toFixed(0)} / ${stall.ranMs.toFixed(0)} / ${stall.waitMs.toFixed(0)} / ${Math.max(0, stall.ms - stall.ranMs - stall.waitMs).toFixed(0)} (${stall.stealMs} stolen, ${stall.majorFaults} faults)`).join(', ') || 'none';
  console.log(`stalls over 20 ms: ${stalls}; longest without the waits for a CPU: ${ownMaxMs.toFixed(0)} ms\n(ms at s from the start: GC / running / waiting for a CPU / blocked (the machine's CPU time stolen meanwhile, over all CPUs; the thread's major page faults)) longest: ${described(longest)}; longest without the waits: ${described(longestOwn)}\nqueries (s from the start): ${queried.join(', ')}`);
}

const sides = new Map();
if (ENGINES.includes('duckdb')) sides.set('duckdb', { config: { dataDir }, scratch: duckDbScratch, dataBytes: () => bytesUnder(join(dataDir, 'events.duckdb')) + bytesUnder(join(dataDir, 'events.duckdb.wal')), stop: async () => undefined });
if (ENGINES.includes('clickhouse')) sides.set('clickhouse', await clickHouseSide());
try {
  const results = new Map();
  const timed = values['stall-only'] ? [] : cases;
  for (const [engine, side] of sides) results.set(engine, await measure(engine, side, timed));

  const cells = (result) =>
    result === undefined ? [] : result.error ? [`failed: ${result.error}`, '', '', ''] : [result.api.p50, result.api.p95, result.raw.p50].map((ms) => ms.toFixed(0)).concat((result.api.p50 / result.raw.p50).toFixed(2));
  const label = { duckdb: 'DuckDB', clickhouse: 'ClickHouse' };
  // With both engines: whether the two servers gave the same answer, byte for byte.
  const both = sides.size === 2;
  const same = (name) => {
    const [a, b] = [...results.values()].map((byCase) => byCase.get(name).answer);
    return a === undefined || b === undefined ? '' : a === b ? 'yes' : 'no';
  };
  if (timed.length > 0) {
    console.log(
      `\n| operation | ${[...sides.keys()].map((engine) => `${label[engine]} p50 ms | ${label[engine]} p95 ms | ${label[engine]} hand SQL p50 ms | ${label[engine]} ratio`).join(' | ')} |${both ? ' same answer |' : ''}\n|---|${[...sides.keys()].map(() => '---|---|---|---|').join('')}${both ? '---|' : ''}`,
    );
  }
  for (const { name } of timed) console.log(`| ${name} | ${[...sides.keys()].flatMap((engine) => cells(results.get(engine).get(name))).join(' | ')} |${both ? ` ${same(name)} |` : ''}`);
  for (const [engine, byCase] of results) {
    for (const [name, { agrees }] of byCase) if (agrees !== undefined) console.log(`${label[engine]} ${name}: the hand SQL's answer is the endpoint's: ${agrees === true ? 'yes' : `NO (${agrees})`}`);
  }

  if (!values['no-stall']) for (const [engine, side] of sides) await stallPhase(engine, side.scratch);
} finally {
  for (const side of sides.values()) await side.stop();
}
if (!values.keep) rmSync(dataDir, { recursive: true, force: true });
