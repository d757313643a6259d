// The breaking-change gate: every bundle compared with the last released version of the specs
// (the newest git tag `specs-v*`, or --base REF), rebuilt from that tag's sources by that
// tag's own bundle script. Fails on a breaking change (unless the API's major version went up)
// and on any other change without a higher info.version; prints the changes as a changelog
// entry. No tag (a clone without tags, or nothing released yet): nothing to compare.
//   node scripts/breaking.mjs [--base REF]   (after `npm run build`)
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';
import { distDir, listApis, specsDir } from './apis.mjs';
import { apiChanges, verdict } from './changes.mjs';

const { values } = parseArgs({ options: { base: { type: 'string' } } });
const git = (args) => execFileSync('git', args, { cwd: specsDir, encoding: 'utf8' }).trim();
const base = values.base ?? git(['tag', '--list', 'specs-v*', '--sort=-v:refname']).split('\n')[0];
if (!base) {
  console.log('breaking-change gate: no released specs (no git tag specs-v*): nothing to compare');
  process.exit(0);
}

// The released sources, bundled by their own script with this checkout's packages.
const scratch = mkdtempSync(join(tmpdir(), 'svc-specs-base-'));
try {
  execFileSync('sh', ['-c', `git archive ${JSON.stringify(base)} specs | tar -x -C ${JSON.stringify(scratch)}`], { cwd: join(specsDir, '..') });
  symlinkSync(join(specsDir, '..', 'node_modules'), join(scratch, 'node_modules'));
  if (existsSync(join(specsDir, 'node_modules'))) symlinkSync(join(specsDir, 'node_modules'), join(scratch, 'specs', 'node_modules'));
  const bundled = spawnSync(process.execPath, ['scripts/bundle.mjs'], { cwd: join(scratch, 'specs'), encoding: 'utf8', env: { ...process.env, REDOCLY_TELEMETRY: 'off' } });
  if (bundled.status !== 0) throw new Error(`bundling the specs of ${base} failed:\n${bundled.stderr}`);

  const baseDist = join(scratch, 'specs', 'dist');
  const problems = [];
  const entries = [];
  const current = listApis().map((api) => api.name);
  for (const name of current) {
    if (!existsSync(join(baseDist, `${name}.json`))) {
      entries.push(`### ${name}\n\n- new API\n`);
      continue;
    }
    const outcome = verdict(name, apiChanges(join(baseDist, `${name}.json`), join(distDir, `${name}.json`)));
    problems.push(...outcome.problems);
    if (outcome.entry) entries.push(outcome.entry);
  }
  const released = spawnSync('git', ['show', `${base}:specs/redocly.yaml`], { cwd: specsDir, encoding: 'utf8' }).stdout;
  for (const name of Object.keys(parse(released).apis)) if (!current.includes(name)) problems.push(`${name}: the API was removed since ${base}`);

  console.log(`breaking-change gate: the bundles against ${base}`);
  console.log(entries.length > 0 ? `\n## Changes since ${base}\n\n${entries.join('\n')}` : 'no changes');
  if (problems.length > 0) {
    console.error(`\n${problems.join('\n')}`);
    process.exitCode = 1;
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
