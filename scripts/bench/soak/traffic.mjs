// The soak's traffic: batches of the ingest bench's events at a steady rate (one batch every 250 ms, at most 8 in
// flight: a slower server gets fewer batches, counted as late), and reporting queries a few
// times a second rotating through segmentation, funnels, users, session lengths and
// composition (at most 4 in flight: the documented limit is 5 concurrent requests). The
// queries ask about a day seeded before the run, so that their cost is fixed by design while
// the store grows: a query over today scans more each second, which the reporting bench
// measures at given sizes instead. Each loop keeps its latencies and answers by status for
// the window since the last row, and its totals.
import { makeBodies } from '../ingest/events.mjs';

const BATCH_INTERVAL_MS = 250;
const MAX_INGEST_IN_FLIGHT = 8;
const MAX_QUERIES_IN_FLIGHT = 4;

const percentile = (values, p) => {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

/** Sends `send()` every `intervalMs` while fewer than `maxInFlight` run; latencies and statuses per window. */
function steadyLoop(intervalMs, maxInFlight, send) {
  let latencies = [];
  let statuses = {};
  const totals = {};
  let inFlight = 0;
  let sent = 0;
  let late = 0;
  const running = new Set();
  const count = (status) => {
    statuses[status] = (statuses[status] ?? 0) + 1;
    totals[status] = (totals[status] ?? 0) + 1;
  };
  const timer = setInterval(() => {
    if (inFlight >= maxInFlight) return void late++;
    inFlight++;
    sent++;
    const started = performance.now();
    const done = send(sent).then(
      (status) => count(status),
      () => count('no answer'),
    ).finally(() => {
      latencies.push(performance.now() - started);
      inFlight--;
      running.delete(done);
    });
    running.add(done);
  }, intervalMs);
  return {
    window() {
      const result = { p99: percentile(latencies, 99), statuses: { ...statuses, ...(late ? { late } : {}) } };
      [latencies, statuses, late] = [[], {}, 0];
      return result;
    },
    totals: () => totals,
    sent: () => sent,
    /** Answers that were not a 2xx, or no answer. */
    errors: () => Object.entries(totals).filter(([status]) => !/^2\d\d$/.test(status)).reduce((sum, [, n]) => sum + n, 0),
    async stop() {
      clearInterval(timer);
      await Promise.allSettled(running);
    },
  };
}

async function statusOf(response) {
  await response.arrayBuffer();
  return String(response.status);
}

export function ingestLoop(server, eventsPerSecond) {
  const perBatch = Math.max(1, Math.round((eventsPerSecond * BATCH_INTERVAL_MS) / 1000));
  const loop = steadyLoop(BATCH_INTERVAL_MS, MAX_INGEST_IN_FLIGHT, (n) =>
    fetch(`${server.url}/batch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: makeBodies(server.apiKey, `soak-${n}`, 1, perBatch)[0] }).then(statusOf),
  );
  return { ...loop, events: () => loop.sent() * perBatch };
}

const e = (spec) => encodeURIComponent(JSON.stringify(spec));
const authorizationOf = (server) => `Basic ${Buffer.from(`${server.apiKey}:${server.secretKey}`).toString('base64')}`;
/** `YYYYMMDD` of a UTC day (the demo project's time zone). */
export const dayOf = (ms) => new Date(ms).toISOString().slice(0, 10).replaceAll('-', '');

/** Events stored on `day`, as segmentation counts them. */
async function storedOn(server, day) {
  const response = await fetch(`${server.url}/api/2/events/segmentation?e=${e({ event_type: '_all' })}&m=totals&start=${day}&end=${day}`, { headers: { authorization: authorizationOf(server) } });
  if (response.status !== 200) throw new Error(`segmentation over the seeded day answered ${response.status}: ${await response.text()}`);
  return (await response.json()).data.series[0].reduce((sum, n) => sum + n, 0);
}

/** Uploads `events` events at noon (UTC) of `dayStartMs`'s day, 4 batches in flight, and waits until reporting counts them all. */
export async function seedDay(server, dayStartMs, events) {
  const batches = Math.ceil(events / 2000);
  let next = 0;
  const upload = async () => {
    for (let batch = next++; batch < batches; batch = next++) {
      const size = Math.min(2000, events - batch * 2000);
      const body = makeBodies(server.apiKey, `seed-${batch}`, 1, size, dayStartMs + 12 * 3_600_000)[0];
      const response = await fetch(`${server.url}/batch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      if (response.status !== 200) throw new Error(`a seed upload answered ${response.status}: ${await response.text()}`);
    }
  };
  await Promise.all(Array.from({ length: 4 }, upload));
  const day = dayOf(dayStartMs);
  const deadline = performance.now() + 15 * 60_000;
  while ((await storedOn(server, day)) < events) {
    if (performance.now() > deadline) throw new Error(`the ${events} seeded events were not all queryable after 15 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

/**
 * Over the seeded day: costs 1, 4, 1, 1 and 1 of the documented budget of 1000 per five
 * minutes (1.6 a query: 2 queries a second spend 960), so that no answer is a 429.
 */
const QUERIES = [
  (day) => `/api/2/events/segmentation?e=${e({ event_type: 'Event A' })}&start=${day}&end=${day}`,
  (day) => `/api/2/funnels?e=${e({ event_type: 'Event A' })}&e=${e({ event_type: 'Event B' })}&start=${day}&end=${day}`,
  (day) => `/api/2/users?start=${day}&end=${day}`,
  (day) => `/api/2/sessions/length?start=${day}&end=${day}`,
  (day) => `/api/2/composition?p=country&start=${day}&end=${day}`,
];

export function reportingLoop(server, queriesPerSecond, day) {
  const authorization = authorizationOf(server);
  return steadyLoop(1000 / queriesPerSecond, MAX_QUERIES_IN_FLIGHT, (n) => fetch(`${server.url}${QUERIES[n % QUERIES.length](day)}`, { headers: { authorization } }).then(statusOf));
}
