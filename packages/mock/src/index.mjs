// Starts one Prism mock server per host role on the bundled specs of @svc/specs.
//
// Bundles that share a host role are merged into one document (packages/mock/dist/<role>.json)
// so that the role is served on a single port. Responses are the specs' static examples
// (Prism's static mode, never `--dynamic`).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { adaptForPrism } from './adapt.mjs';
import { mergeBundles, splitByHostRole } from './merge.mjs';

export { mergeBundles, checkMerged, splitByHostRole } from './merge.mjs';
export { adaptForPrism } from './adapt.mjs';

const here = dirname(fileURLToPath(import.meta.url));
export const packageDir = resolve(here, '..');
export const mockDistDir = join(packageDir, 'dist');

/** Default port of each known host role; unknown (future) roles get the next free numbers. */
export const DEFAULT_PORTS = Object.freeze({ ingest: 4010, app: 4011, experiment: 4012, api: 4013 });

/** Folder of the bundles written by `@svc/specs`' build (specs/dist). */
export function specsDistDir() {
  try {
    return dirname(fileURLToPath(import.meta.resolve('@svc/specs/apis.json')));
  } catch {
    return resolve(packageDir, '../../specs/dist');
  }
}

/** apis.json of @svc/specs: [{ name, title, hostRole, operations, servers }]. */
export function loadApis(distDir = specsDistDir()) {
  const file = join(distDir, 'apis.json');
  if (!existsSync(file)) {
    throw new Error(`${file} not found: build the specs first (npx turbo run build --filter=@svc/specs)`);
  }
  return JSON.parse(readFileSync(file, 'utf8'));
}

/**
 * Writes one OpenAPI document per host role into packages/mock/dist/ (merging bundles that
 * share a role, an operation with servers of other roles going to those roles' documents,
 * then adapting the copy for Prism, see adapt.mjs) and returns
 * { role: { file, groups, renamed, adapted } }, roles in apis.json order.
 */
export function prepareDocuments({ distDir = specsDistDir(), outDir = mockDistDir } = {}) {
  const apis = loadApis(distDir);
  const byRole = new Map();
  for (const api of apis) {
    if (!api.hostRole) throw new Error(`API ${api.name} has no host role (x-svc-host-role)`);
    const doc = JSON.parse(readFileSync(join(distDir, `${api.name}.json`), 'utf8'));
    for (const [role, part] of splitByHostRole(api, doc)) {
      if (!byRole.has(role)) byRole.set(role, []);
      byRole.get(role).push({ name: api.name, doc: part, own: api.hostRole === role });
    }
  }
  // The role's own groups first: the merged document takes the first part's servers.
  for (const parts of byRole.values()) parts.sort((a, b) => Number(b.own) - Number(a.own));
  mkdirSync(outDir, { recursive: true });
  const result = {};
  for (const [role, parts] of byRole) {
    const { doc, renamed } = mergeBundles(parts, { role });
    const adapted = adaptForPrism(doc);
    const file = join(outDir, `${role}.json`);
    writeFileSync(file, JSON.stringify(doc, null, 2) + '\n');
    result[role] = { file, groups: parts.map((p) => p.name), renamed, adapted };
  }
  return result;
}

/** A TCP port that is free right now on `host`. */
export function freePort(host = '127.0.0.1') {
  return new Promise((resolvePort, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

function prismBin() {
  const require = createRequire(import.meta.url);
  const pkgFile = require.resolve('@stoplight/prism-cli/package.json');
  const pkg = JSON.parse(readFileSync(pkgFile, 'utf8'));
  const bin = typeof pkg.bin === 'string' ? pkg.bin : pkg.bin.prism;
  return join(dirname(pkgFile), bin);
}

function waitForExit(child, ms) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((done) => {
    const timer = setTimeout(() => done(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      done(true);
    });
  });
}

async function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  if (!(await waitForExit(child, 5000))) {
    child.kill('SIGKILL');
    await waitForExit(child, 5000);
  }
}

/** Spawns Prism on `file` and resolves once it reports that it is listening. */
function startPrism({ role, file, host, port, timeoutMs, verbose, errors }) {
  const args = [prismBin(), 'mock', file, '--host', host, '--port', String(port), '--dynamic', 'false'];
  // `--errors` only turns response-schema violations into 500s; see README.md.
  if (errors) args.push('--errors');
  if (!verbose) args.push('--verboseLevel', 'warn');
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: '0' } });
  let output = '';
  return new Promise((resolveStart, reject) => {
    const fail = (why) => {
      clearTimeout(timer);
      stopChild(child).finally(() =>
        reject(new Error(`Prism for host role ${role} (${file}, port ${port}) ${why}\n${output.slice(-4000)}`)),
      );
    };
    const timer = setTimeout(() => fail(`did not start within ${timeoutMs} ms`), timeoutMs);
    const onExit = (code, signal) => fail(`exited early (code ${code}, signal ${signal})`);
    child.once('exit', onExit);
    const probe = async () => {
      // Prism logs "Prism is listening on ..." at info level only, so the port is polled.
      while (child.exitCode === null && child.signalCode === null) {
        const open = await new Promise((ok) => {
          const socket = net.connect({ host, port }, () => {
            socket.destroy();
            ok(true);
          });
          socket.on('error', () => ok(false));
        });
        if (open) {
          clearTimeout(timer);
          child.off('exit', onExit);
          resolveStart(child);
          return;
        }
        await new Promise((r) => setTimeout(r, 150));
      }
    };
    const collect = (chunk) => {
      output += chunk;
      if (output.length > 20000) output = output.slice(-10000);
      if (verbose) process.stderr.write(`[prism ${role}] ${chunk}`);
    };
    child.stdout.setEncoding('utf8').on('data', collect);
    child.stderr.setEncoding('utf8').on('data', collect);
    probe();
  });
}

/**
 * Starts one Prism mock per host role.
 *
 * @param {object} [options]
 * @param {string} [options.host='127.0.0.1']
 * @param {Record<string, number>} [options.ports] port per role; 0 picks a free port
 * @param {number} [options.basePort] when given, roles without an explicit port get
 *   basePort + their index in DEFAULT_PORTS order (unknown roles after them); 0 = all auto
 * @param {(line: string) => void} [options.log=console.log] receives the `role → url` lines
 * @param {boolean} [options.verbose=false] pass Prism's request log through to stderr
 * @param {boolean} [options.errors=true] start Prism with `--errors` (default on; SVC_MOCK_ERRORS=0 turns it off; see README.md)
 * @param {number} [options.startTimeoutMs=60000]
 * @param {string} [options.outDir] where the role documents are written (packages/mock/dist);
 *   a folder of its own lets mocks start while others are starting
 * @returns {Promise<{ urls: Record<string, string>, documents: Record<string, object>, stop(): Promise<void> }>}
 */
export async function startMocks({
  host = '127.0.0.1',
  ports = {},
  basePort,
  log = console.log,
  verbose = false,
  errors = process.env.SVC_MOCK_ERRORS !== '0',
  startTimeoutMs = 60_000,
  outDir = mockDistDir,
} = {}) {
  const documents = prepareDocuments({ outDir });
  const roles = Object.keys(documents);
  const known = Object.keys(DEFAULT_PORTS);
  const order = [...known, ...roles.filter((r) => !known.includes(r)).sort()];
  const maxDefault = Math.max(...Object.values(DEFAULT_PORTS));
  const chosen = {};
  for (const role of roles) {
    let port = ports[role];
    if (port === undefined && basePort !== undefined) port = basePort === 0 ? 0 : basePort + order.indexOf(role);
    if (port === undefined) port = DEFAULT_PORTS[role] ?? maxDefault + 1 + order.indexOf(role) - known.length;
    chosen[role] = port === 0 ? await freePort(host) : port;
  }
  const children = {};
  const started = await Promise.allSettled(
    roles.map(async (role) => {
      children[role] = await startPrism({
        role,
        file: documents[role].file,
        host,
        port: chosen[role],
        timeoutMs: startTimeoutMs,
        verbose,
        errors,
      });
    }),
  );
  const stop = async () => {
    await Promise.all(Object.values(children).map(stopChild));
  };
  const failed = started.filter((s) => s.status === 'rejected');
  if (failed.length) {
    await stop();
    throw new AggregateError(
      failed.map((f) => f.reason),
      failed.map((f) => f.reason.message).join('\n'),
    );
  }
  const urlHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  const urls = Object.fromEntries(roles.map((role) => [role, `http://${urlHost}:${chosen[role]}`]));
  for (const role of roles) {
    log?.(`${role} → ${urls[role]}  (${documents[role].groups.join(', ')})`);
  }
  return { urls, documents, stop };
}
