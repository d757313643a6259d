// The publishable packages (every workspace package not marked private) as their users get
// them: each packed with `npm pack` (after its build), linted by publint and arethetypeswrong
// (ESM, types, exports), then installed from the tarballs into an empty project, which
// type-checks (strict, NodeNext) and runs a program against them, then one against a running
// reference server (`svc-server start`, as a user runs it), whose log must name the request the
// program was refused. Also: the Python wheel and the Go module carry the version of @svc/client.
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startServerProcess } from '../../scripts/bench/support/server-process.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const run = (command, args, cwd) => execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const failures = [];
const check = async (what, work) => {
  try {
    const output = await work();
    console.log(`ok: ${what}${output ? `\n${output.trim().replace(/^/gm, '    ')}` : ''}`);
  } catch (error) {
    failures.push(what);
    console.error(`FAILED: ${what}\n${String(error.stdout ?? '')}${String(error.stderr ?? error.message)}`);
  }
};

const packages = readdirSync(join(root, 'packages'))
  .map((folder) => ({ folder: join(root, 'packages', folder), manifest: JSON.parse(readFileSync(join(root, 'packages', folder, 'package.json'), 'utf8')) }))
  .filter(({ manifest }) => !manifest.private);
const scratch = mkdtempSync(join(tmpdir(), 'svc-packaging-'));
try {
  const tarballs = [];
  for (const { folder, manifest } of packages) {
    const [packed] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', scratch], folder));
    const tarball = join(scratch, packed.filename);
    tarballs.push(tarball);
    await check(`${manifest.name}@${manifest.version} packs (${packed.entryCount} files, ${(packed.size / 1024).toFixed(0)} kB): dist, README, CHANGELOG, package.json, no sources or tests`, () => {
      const names = packed.files.map((file) => file.path);
      const stray = names.filter((name) => !/^(dist\/|README\.md$|CHANGELOG\.md$|LICENSE|package\.json$)/.test(name));
      if (stray.length > 0) throw new Error(`unexpected files: ${stray.join(', ')}`);
      for (const needed of ['README.md', 'CHANGELOG.md']) if (!names.includes(needed)) throw new Error(`no ${needed}`);
    });
    await check(`${manifest.name}: publint`, () => run(bin('publint'), ['--strict', folder], folder));
    await check(`${manifest.name}: arethetypeswrong (ESM only, Node 16+ resolution and bundlers)`, () => run(bin('attw'), [tarball, '--profile', 'esm-only', '--quiet'], folder));
  }

  // An empty project: the tarballs installed as a user's project installs them.
  const consumer = join(scratch, 'consumer');
  mkdirSync(consumer);
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  await check('the tarballs install into an empty project', () => run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', ...tarballs], consumer));
  writeFileSync(join(consumer, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: false, types: ['node'], typeRoots: [join(root, 'node_modules', '@types')] }, include: ['*.ts'] }));
  writeFileSync(join(consumer, 'use.ts'), readFileSync(join(here, 'consumer.ts'), 'utf8'));
  await check('the project type-checks against them (tsc, strict, NodeNext, their .d.ts checked too)', () => run(bin('tsc'), ['-p', consumer], consumer));
  writeFileSync(join(consumer, 'use.mjs'), readFileSync(join(here, 'consumer.mjs'), 'utf8'));
  await check('a program imports and uses them', () => run(process.execPath, ['use.mjs'], consumer));
  writeFileSync(join(consumer, 'against-server.mjs'), readFileSync(join(here, 'against-server.mjs'), 'utf8'));
  await check('against a running server: a call answered, a RateLimitError with retryAfter, for await over pages, the refused request id in the server log', async () => {
    let log = '';
    const server = await startServerProcess({ serverArgs: ['--reporting-cost-limits', '200,100000'], onStderr: (chunk) => (log += chunk) });
    try {
      const env = { ...process.env, SVC_URL: server.url, SVC_API_KEY: server.apiKey, SVC_SECRET_KEY: server.secretKey };
      const { stdout } = await promisify(execFile)(process.execPath, ['against-server.mjs'], { cwd: consumer, env, encoding: 'utf8' });
      const requestId = stdout.trim();
      const line = `request ${requestId}: GET /api/2/users answered 429`;
      if (!log.includes(line)) throw new Error(`the server's log has no "${line}":\n${log}`);
      return line;
    } finally {
      await server.stop();
    }
  });

  // One SDK version in every language.
  const version = packages.find(({ manifest }) => manifest.name === '@svc/client').manifest.version;
  await check(`the Python wheel and the Go module carry @svc/client's version ${version}`, () => {
    const python = /^version = "([^"]+)"/m.exec(readFileSync(join(root, 'packages/sdk-python/pyproject.toml'), 'utf8'))?.[1];
    const go = /const Version = "([^"]+)"/.exec(readFileSync(join(root, 'packages/sdk-go/version.go'), 'utf8'))?.[1];
    if (python !== version || go !== version) throw new Error(`pyproject.toml has ${python}, version.go has ${go}`);
  });
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
if (failures.length > 0) {
  console.error(`\n${failures.length} packaging check(s) failed: ${failures.join('; ')}`);
  process.exitCode = 1;
}
