// Summarises a V8 CPU profile (.cpuprofile): the functions with the most self time, and
// self time per script, as shares of the sampled time.
//   node scripts/bench/ingest/profile-summary.mjs FILE.cpuprofile [--top 30]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '30' } } });
const profile = JSON.parse(readFileSync(positionals[0], 'utf8'));
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const selfMicros = new Map();
profile.samples.forEach((id, i) => selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const total = [...selfMicros.values()].reduce((a, b) => a + b, 0);

const byFunction = new Map();
const byScript = new Map();
for (const [id, micros] of selfMicros) {
  const { functionName, url, lineNumber } = nodes.get(id).callFrame;
  const script = url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/packages\//, '') || '(native)';
  const fn = `${functionName || '(anonymous)'} ${script}:${lineNumber + 1}`;
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + micros);
  byScript.set(script, (byScript.get(script) ?? 0) + micros);
}
const print = (title, map) => {
  console.log(`\n${title}`);
  for (const [name, micros] of [...map].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top))) {
    console.log(`${((100 * micros) / total).toFixed(1).padStart(5)}%  ${name}`);
  }
};
console.log(`sampled ${(total / 1e6).toFixed(1)} s`);
print('self time by function', byFunction);
print('self time by script', byScript);
