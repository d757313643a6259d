// Import benchmark: a seeded day of events (default 1,000,000, spread over its 24 hours of server
// upload time, as the export benchmark's) loaded through the journal loader into a fresh data
// directory with a source project and one empty project per run; the server (`svc-server start`
// on it, DuckDB, a process of its own) exports the day through GET /api/2/export into zips of
// `--export-hours` hours each (an export is at most 4 GB: 10 million events need 6-hour parts),
// then `svc-server import` (a process of its own, as a user runs it) sends the folder of
// archives to the server's next empty project, once per run. Printed: the archive's size, the import throughput
// (events stored per second of the command's wall time: median of the runs, and each run) and
// the machine's load average. Each run is a round trip: once the server has loaded what the
// import sent, the target project's events and users of the day (segmentation's totals and
// uniques of every event) must be the source's.
//   node scripts/bench/import/run.mjs [--events 1000000] [--runs 3] [--users 100000] [--concurrency 4] [--export-hours 24]
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { Tenancy } from '../../../packages/server/dist/index.js';
import { loadSeededDay } from '../support/seeded-load.mjs';
import { serverBin, serverFlags, startServerOn } from '../support/server-flags.mjs';

const { values } = parseArgs({ options: { events: { type: 'string', default: '1000000' }, runs: { type: 'string', default: '3' }, users: { type: 'string', default: '100000' }, concurrency: { type: 'string', default: '4' }, 'export-hours': { type: 'string', default: '24' } } });
const EVENTS = Number(values.events);
const RUNS = Number(values.runs);
const median = (numbers) => [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)];
const basic = (project) => ({ authorization: `Basic ${Buffer.from(`${project.api_key}:${project.secret_key}`).toString('base64')}` });

/** A project's events and users of the seeded day (every event type), as reporting counts them. */
async function dayFigures(url, project) {
  const figure = async (metric) => {
    const answer = await fetch(`${url}/api/2/events/segmentation?start=20261120&end=20261120&m=${metric}&e=${encodeURIComponent('{"event_type":"_all"}')}`, { headers: basic(project) });
    if (answer.status !== 200) throw new Error(`segmentation answered ${answer.status}: ${await answer.text()}`);
    return (await answer.json()).data.seriesCollapsed[0][0].value;
  };
  return { events: await figure('totals'), users: await figure('uniques') };
}

/** The target's figures once they are the source's (its loads catch up), or an error after `waitMs`. */
async function roundTrip(url, source, target, waitMs = 600_000) {
  const expected = await dayFigures(url, source);
  const deadline = performance.now() + waitMs;
  for (;;) {
    const found = await dayFigures(url, target);
    if (found.events === expected.events && found.users === expected.users) return found;
    if (performance.now() > deadline || found.events > expected.events) throw new Error(`round trip: the source has ${JSON.stringify(expected)}, the target ${JSON.stringify(found)}`);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
}

const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-import-'));
const tenancy = new Tenancy(dataDir);
const orgId = tenancy.createOrganization('Bench').id;
const source = tenancy.createProject(orgId, 'Source');
const targets = Array.from({ length: RUNS }, (_, run) => tenancy.createProject(orgId, `Import ${run + 1}`));

/** `svc-server import` of the archive into the project: its wall seconds and what it printed. */
function runImport(archive, url, apiKey, state) {
  const started = performance.now();
  const child = spawn(process.execPath, [...serverFlags(), serverBin, 'import', archive, '--url', url, '--api-key', apiKey, '--state', state, '--concurrency', values.concurrency], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => (code === 0 ? resolve({ seconds: (performance.now() - started) / 1000, output }) : reject(new Error(`svc-server import exited with ${code}:\n${output}`))));
  });
}

const loadSeconds = await loadSeededDay(dataDir, source.app_id, EVENTS, Number(values.users), Date.UTC(2026, 10, 20));
console.log(`dataset: ${EVENTS.toLocaleString()} events over 24 hours of server upload time, loaded in ${loadSeconds.toFixed(0)} s`);
const { child, url } = await startServerOn(dataDir);
try {
  const archive = join(dataDir, 'export');
  mkdirSync(archive);
  const hours = Number(values['export-hours']);
  const hour = (h) => `20261120T${String(h).padStart(2, '0')}`;
  const exportStarted = performance.now();
  for (let first = 0; first < 24; first += hours) {
    const response = await fetch(`${url}/api/2/export?start=${hour(first)}&end=${hour(Math.min(23, first + hours - 1))}`, { headers: basic(source) });
    if (response.status !== 200) throw new Error(`export answered ${response.status}: ${await response.text()}`);
    await pipeline(Readable.fromWeb(response.body), createWriteStream(join(archive, `${hour(first)}.zip`)));
  }
  const exportSeconds = (performance.now() - exportStarted) / 1000;
  const bytes = readdirSync(archive).reduce((sum, file) => sum + statSync(join(archive, file)).size, 0);
  console.log(`archives: ${(bytes / 2 ** 20).toFixed(1)} MB in ${Math.ceil(24 / hours)} exports of ${hours} hours, exported in ${exportSeconds.toFixed(0)} s (${Math.round(EVENTS / exportSeconds).toLocaleString()} events/s)`);
  const rates = [];
  for (const [run, target] of targets.entries()) {
    const { seconds, output } = await runImport(archive, url, target.api_key, join(dataDir, `state-${run}.json`));
    const stored = Number(/([\d,]+) stored/.exec(output)[1].replace(/,/g, ''));
    if (stored !== EVENTS) throw new Error(`the import stored ${stored} events, not ${EVENTS}:\n${output}`);
    rates.push(EVENTS / seconds);
    console.log(`run ${run + 1}: ${seconds.toFixed(1)} s, ${Math.round(EVENTS / seconds).toLocaleString()} events/s`);
    const loaded = performance.now();
    const { events, users } = await roundTrip(url, source, target);
    console.log(`run ${run + 1}: round trip: the target holds the source's ${events.toLocaleString()} events of ${users.toLocaleString()} users (loaded ${((performance.now() - loaded) / 1000).toFixed(0)} s after the import ended)`);
  }
  console.log(
    `import throughput: median ${Math.round(median(rates)).toLocaleString()} events/s over ${RUNS} runs of ${EVENTS.toLocaleString()} events (concurrency ${values.concurrency}); load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')} on ${availableParallelism()} CPUs`,
  );
} finally {
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  rmSync(dataDir, { recursive: true, force: true });
}
