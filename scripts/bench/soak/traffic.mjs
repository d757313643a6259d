// The soak's traffic: batches of the ingest bench's events at a steady rate (one batch every 250 ms, at most 8 in
// flight: a slower server gets fewer batches, counted as late), and reporting queries a few
// times a second rotating through segmentation, funnels, users, session lengths and
// composition over today (at most 4 in flight: the documented limit is 5 concurrent
// requests). Each loop keeps its latencies and answers by status for the window since the
// last row, and its totals.
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

const today = () => new Date().toISOString().slice(0, 10).replaceAll('-', '');
const e = (spec) => encodeURIComponent(JSON.stringify(spec));
/**
 * Over today (where the soak's events are): costs 1, 4, 1, 1 and 1 of the documented budget of
 * 1000 per five minutes (1.6 a query: 2 queries a second spend 960), so that no answer is a 429.
 */
const QUERIES = [
  () => `/api/2/events/segmentation?e=${e({ event_type: 'Event A' })}&start=${today()}&end=${today()}`,
  () => `/api/2/funnels?e=${e({ event_type: 'Event A' })}&e=${e({ event_type: 'Event B' })}&start=${today()}&end=${today()}`,
  () => `/api/2/users?start=${today()}&end=${today()}`,
  () => `/api/2/sessions/length?start=${today()}&end=${today()}`,
  () => `/api/2/composition?p=country&start=${today()}&end=${today()}`,
];

export function reportingLoop(server, queriesPerSecond) {
  const authorization = `Basic ${Buffer.from(`${server.apiKey}:${server.secretKey}`).toString('base64')}`;
  return steadyLoop(1000 / queriesPerSecond, MAX_QUERIES_IN_FLIGHT, (n) => fetch(`${server.url}${QUERIES[n % QUERIES.length]()}`, { headers: { authorization } }).then(statusOf));
}
