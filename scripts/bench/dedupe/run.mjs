// The insert_id window under growth: fills it with --entries ids (default 17 million, past
// 2^24, where storage and table sizes double), then adds live batches of 500 ids while a 5 ms
// timer watches the event loop. Prints the fill rate, the batch times and the longest gap.
//   node scripts/bench/dedupe/run.mjs [--entries 17000000] [--batches 4000]
import { parseArgs } from 'node:util';
import { InsertIdWindow } from '../../../packages/server/dist/ingestion/dedupe.js';
import { withServerFlags } from '../support/server-flags.mjs';

// The window runs in this process: with the Node flags the server runs with.
withServerFlags();

const { values } = parseArgs({ options: { entries: { type: 'string', default: '17000000' }, batches: { type: 'string', default: '4000' } } });
const ENTRIES = Number(values.entries);
const BATCHES = Number(values.batches);
const now = Date.now();
const window = new InsertIdWindow(7 * 86_400_000);
// The live batches start just below the doubling point, so that they cross it.
const filled = Math.max(0, ENTRIES - (BATCHES * 500) / 2);
let started = performance.now();
for (let i = 0; i < filled; i++) window.add(1, `fill-${i}-0123456789abcdef`, now);
const fillSeconds = (performance.now() - started) / 1000;

let last = performance.now();
const gaps = [];
const timer = setInterval(() => {
  const at = performance.now();
  gaps.push(at - last);
  last = at;
}, 5);
const batchTimes = [];
let next = 0;
for (let b = 0; b < BATCHES; b++) {
  await new Promise((resolve) => setTimeout(resolve, 1));
  started = performance.now();
  for (let j = 0; j < 500; j++) window.add(1, `live-${next++}`, now);
  batchTimes.push(performance.now() - started);
}
clearInterval(timer);
const percentile = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))];
const memory = process.memoryUsage();
console.log(`filled ${filled.toLocaleString()} ids in ${fillSeconds.toFixed(1)} s (${((fillSeconds * 1e6) / filled).toFixed(2)} µs/id); then ${BATCHES} batches of 500 up to ${window.size.toLocaleString()} ids`);
console.log(`batch of 500: p50 ${percentile(batchTimes, 50).toFixed(2)} ms, p99 ${percentile(batchTimes, 99).toFixed(2)} ms, max ${Math.max(...batchTimes).toFixed(1)} ms`);
console.log(`event loop (5 ms timer): longest gap ${Math.max(...gaps).toFixed(1)} ms, p99 ${percentile(gaps, 99).toFixed(1)} ms`);
console.log(`memory: heap ${(memory.heapUsed / 2 ** 20).toFixed(0)} MB, off-heap ${(memory.external / 2 ** 20).toFixed(0)} MB`);
