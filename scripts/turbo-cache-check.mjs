// Fails when a task of `turbo run TASK…` would not be a cache hit. Run after those tasks have
// run (CI runs it after `npm test`): a task whose key changes by running (say, because it hashes
// files that another task writes) would otherwise re-run on every build. For each miss it prints
// what changed since the task's last run recorded in .turbo/runs (written when
// TURBO_RUN_SUMMARY=true, as .ci/run sets): input files, dependencies' keys, settings.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const tasks = process.argv.slice(2);
if (tasks.length === 0) throw new Error('usage: node scripts/turbo-cache-check.mjs TASK…');
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dry = JSON.parse(
  execFileSync(join(root, 'node_modules', '.bin', 'turbo'), ['run', ...tasks, '--dry=json'], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    // A dry run recorded as a run would pass for the last run of every task.
    env: { ...process.env, TURBO_RUN_SUMMARY: 'false' },
  }),
);
const planned = dry.tasks.filter((task) => task.command !== '<NONEXISTENT>');
const misses = planned.filter((task) => task.cache.status !== 'HIT');
console.log(`turbo cache: ${planned.length - misses.length} of ${planned.length} tasks of \`turbo run ${tasks.join(' ')}\` cached`);
if (misses.length === 0) process.exit(0);

const runsDir = join(root, '.turbo', 'runs');
const runs = (existsSync(runsDir) ? readdirSync(runsDir) : [])
  .filter((file) => file.endsWith('.json'))
  .map((file) => join(runsDir, file))
  .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)
  .map((file) => JSON.parse(readFileSync(file, 'utf8')));
const hashes = new Map(dry.tasks.map((task) => [task.taskId, task.hash]));
const changed = (a, b) => JSON.stringify(a) !== JSON.stringify(b);

for (const task of misses) {
  console.log(`${task.taskId} would run (key ${task.hash})`);
  const run = runs.find((r) => r.tasks.some((t) => t.taskId === task.taskId));
  if (!run) {
    console.log('  no earlier run of it is recorded in .turbo/runs');
    continue;
  }
  const last = run.tasks.find((t) => t.taskId === task.taskId);
  if (last.hash === task.hash) {
    console.log(`  same key as its last run, whose result is not in the cache (${last.execution?.exitCode ?? 'no'} exit code)`);
    continue;
  }
  for (const file of new Set([...Object.keys(last.inputs), ...Object.keys(task.inputs)])) {
    const [before, after] = [last.inputs[file], task.inputs[file]];
    if (before !== after) console.log(`  input ${before === undefined ? 'added' : after === undefined ? 'removed' : 'changed'}: ${task.directory}/${file}`);
  }
  const lastHashes = new Map(run.tasks.map((t) => [t.taskId, t.hash]));
  for (const dependency of task.dependencies) {
    if (lastHashes.has(dependency) && lastHashes.get(dependency) !== hashes.get(dependency)) console.log(`  dependency's key changed: ${dependency}`);
  }
  for (const key of ['hashOfExternalDependencies', 'environmentVariables', 'resolvedTaskDefinition']) {
    if (changed(last[key], task[key])) console.log(`  ${key} changed`);
  }
  for (const [key, value] of Object.entries(dry.globalCacheInputs)) {
    if (changed(run.globalCacheInputs[key], value)) console.log(`  global ${key} changed`);
  }
}
process.exit(1);
