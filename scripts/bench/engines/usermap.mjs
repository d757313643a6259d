#!/usr/bin/env node
// Cost of one `applyUserMappings` call on the DuckDB engine (one mapping per call, as the
// user-map endpoint sends them one request at a time), over a data directory with
// `--users` users already loaded. Prints the median and 90th percentile per call of each
// run, then the median of the runs' medians. Needs the server's dist
// (`cd packages/server && npx tsc -p tsconfig.build.json`).
//
//   node scripts/bench/engines/usermap.mjs [--users 10000] [--calls 200] [--runs 3]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDbEngine } from '../../../packages/server/dist/store/duckdb/engine.js';

const { values: options } = parseArgs({
  options: { users: { type: 'string', default: '10000' }, calls: { type: 'string', default: '200' }, runs: { type: 'string', default: '3' } },
});
const USERS = Number(options.users);
const CALLS = Number(options.calls);
const APP = 1;
const START = Date.UTC(2026, 9, 1);

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const percentile = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))];

async function run() {
  const dir = mkdtempSync(join(tmpdir(), 'svc-usermap-bench-'));
  try {
    const engine = await DuckDbEngine.open(dir);
    const segment = join(dir, 'segment-1.jsonl');
    const lines = Array.from({ length: USERS }, (_, i) =>
      engine.journalLine({ app_id: APP, insert_id: `e-${i}`, event_type: 'open', user_id: `user-${i}`, device_id: `device-${i}`, time: START + i, server_upload_time: START + i }),
    );
    writeFileSync(segment, `${lines.join('\n')}\n`);
    await engine.loadSegment(segment, 'segment-1');
    const perCall = [];
    for (let i = 0; i < CALLS; i++) {
      const started = performance.now();
      // Half the calls map a user, the other half unmap the one mapped before.
      const userId = `user-${(i >> 1) % USERS}`;
      await engine.applyUserMappings([APP], [{ userId, globalUserId: i % 2 === 0 ? `global-${i}` : null }]);
      perCall.push(performance.now() - started);
    }
    await engine.close();
    return perCall;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const medians = [];
for (let r = 0; r < Number(options.runs); r++) {
  const perCall = await run();
  medians.push(median(perCall));
  console.log(`run ${r + 1}: ${CALLS} calls, median ${median(perCall).toFixed(2)} ms, p90 ${percentile(perCall, 0.9).toFixed(2)} ms per call`);
}
console.log(`median of the runs' medians: ${median(medians).toFixed(2)} ms per applyUserMappings call`);
