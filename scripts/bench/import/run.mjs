// Import benchmark: a seeded set of events (default 1,000,000) sent to a fresh server
// (`svc-server start`, DuckDB, a process of its own) through /batch, exported through
// GET /api/2/export into a zip, then imported by `svc-server import` (a process of its own, as
// a user runs it) into a fresh project of the same server, several times. Printed: the
// archive's size, the import throughput (events acknowledged per second of the command's wall
// time, median of the runs, and each run) and the machine's load average.
//   node scripts/bench/import/run.mjs [--events 1000000] [--runs 3] [--users 100000] [--concurrency 4]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { archiveHours } from '../../../packages/server/dist/export/import/archives.js';
import { Tenancy } from '../../../packages/server/dist/index.js';
import { deviceFields, random } from '../support/seeded-load.mjs';
import { serverBin, serverFlags } from '../support/server-flags.mjs';
import { startServerProcess } from '../support/server-process.mjs';

const { values } = parseArgs({ options: { events: { type: 'string', default: '1000000' }, runs: { type: 'string', default: '3' }, users: { type: 'string', default: '100000' }, concurrency: { type: 'string', default: '4' } } });
const EVENTS = Number(values.events);
const RUNS = Number(values.runs);
const USERS = Number(values.users);
const DAY = Date.UTC(2026, 10, 20);
const TYPES = ['View Item', 'Add to Cart', 'Checkout', 'Purchase', 'Search', 'Share', 'Login', 'Open App'];
const median = (numbers) => [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)];
const hourText = (ms) => new Date(ms).toISOString().slice(0, 13).replace(/-/g, '');

/** Events as an SDK sends them: properties, a user property update now and then, a group, device fields. */
function* batches() {
  const next = random(7);
  for (let offset = 0; offset < EVENTS; offset += 2000) {
    const batch = [];
    for (let i = offset; i < Math.min(EVENTS, offset + 2000); i++) {
      const user = Math.floor(next() ** 1.5 * USERS);
      const time = DAY + Math.floor((i / EVENTS) * 86_400_000);
      batch.push({
        insert_id: `e-${i}`,
        event_type: TYPES[Math.floor(next() * TYPES.length)],
        user_id: `user-${user}`,
        device_id: `device-${user}`,
        time,
        session_id: time - (time % 1_800_000),
        event_properties: { item_id: `sku-${Math.floor(next() * 500)}`, price: Math.round(next() * 10_000) / 100, page: '/catalog/shoes' },
        ...(i % 10 === 0 ? { user_properties: { $set: { plan: user % 2 ? 'pro' : 'free', visits: i % 50 } } } : {}),
        ...(user % 4 === 0 ? { groups: { company: `company-${user % 97}` } } : {}),
        ...deviceFields(user),
      });
    }
    yield batch;
  }
}

/** Sends the events to the source project, four batches in flight. */
async function upload(url, apiKey) {
  const inFlight = new Set();
  for (const events of batches()) {
    while (inFlight.size >= 4) await Promise.race(inFlight);
    const sending = fetch(`${url}/batch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: apiKey, events }) }).then(async (response) => {
      if (response.status !== 200) throw new Error(`/batch answered ${response.status}: ${await response.text()}`);
      inFlight.delete(sending);
    });
    inFlight.add(sending);
  }
  await Promise.all(inFlight);
}

/** `svc-server import` of the archive into the project: its wall seconds and its summary. */
function runImport(archive, url, apiKey, state) {
  const started = performance.now();
  const child = spawn(process.execPath, [...serverFlags(), serverBin, 'import', archive, '--url', url, '--api-key', apiKey, '--state', state, '--concurrency', values.concurrency], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => (code === 0 ? resolve({ seconds: (performance.now() - started) / 1000, output }) : reject(new Error(`svc-server import exited with ${code}:\n${output}`))));
  });
}

const server = await startServerProcess();
const work = mkdtempSync(join(tmpdir(), 'svc-bench-import-'));
try {
  const loadStarted = performance.now();
  await upload(server.url, server.apiKey);
  console.log(`source: ${EVENTS.toLocaleString()} events sent through /batch in ${((performance.now() - loadStarted) / 1000).toFixed(0)} s`);
  // The engine loads the journal in the background: exported once every event is there.
  const archive = join(work, 'export.zip');
  for (let lines = 0; lines < EVENTS; ) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const response = await fetch(`${server.url}/api/2/export?start=${hourText(Date.now() - 3 * 3_600_000)}&end=${hourText(Date.now())}`, {
      headers: { authorization: `Basic ${Buffer.from(`${server.apiKey}:${server.secretKey}`).toString('base64')}` },
    });
    if (response.status !== 200 && response.status !== 404) throw new Error(`export answered ${response.status}: ${await response.text()}`);
    if (response.status === 404) continue;
    // An answer cut while the engine is still loading is asked again.
    const body = await response.arrayBuffer().catch((failure) => console.log(`export cut (${failure.cause?.message ?? failure.message}): again`));
    if (!body) continue;
    writeFileSync(archive, Buffer.from(body));
    lines = 0;
    for await (const hour of archiveHours(archive, () => true, () => undefined)) for await (const chunk of hour.lines) lines += chunk.length;
  }
  console.log(`archive: ${(statSync(archive).size / 2 ** 20).toFixed(1)} MB`);

  const tenancy = new Tenancy(server.dataDir);
  const orgId = tenancy.organizations[0].id;
  const rates = [];
  for (let run = 0; run < RUNS; run++) {
    const project = tenancy.createProject(orgId, `Import ${run}`);
    // The server reloads its tenancy file within a second of a change.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const { seconds, output } = await runImport(archive, server.url, project.api_key, join(work, `state-${run}.json`));
    const stored = Number(/([\d,]+) stored/.exec(output)[1].replace(/,/g, ''));
    if (stored !== EVENTS) throw new Error(`the import stored ${stored} events, not ${EVENTS}:\n${output}`);
    rates.push(EVENTS / seconds);
    console.log(`run ${run + 1}: ${seconds.toFixed(1)} s, ${Math.round(EVENTS / seconds).toLocaleString()} events/s`);
  }
  console.log(`import throughput: median ${Math.round(median(rates)).toLocaleString()} events/s over ${RUNS} runs of ${EVENTS.toLocaleString()} events (concurrency ${values.concurrency}); load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')} on ${availableParallelism()} CPUs`);
} finally {
  await server.stop();
  rmSync(work, { recursive: true, force: true });
}
