// `svc-server import` against a server: the reporting oracle's dataset ingested into one
// project, exported through GET /api/2/export, imported into fresh projects of the same server.
// The main reporting answers and the event counts agree; a second import stores nothing new; an
// interrupted run (stopped after a few batches, or its state file cut) resumes and stores every
// event once; bad archives and lines are reported and skipped; a wrong key is a clear error.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { main } from '../../src/cli.js';
import yazl from 'yazl';
import { runImport, type ImportOptions } from '../../src/export/import/run-import.js';
import { ImportError } from '../../src/export/import/retrying.js';
import type { IssuedProject } from '../../src/shared/tenancy.js';
import { generateBatches } from '../reporting/dataset.js';
import { type Harness, startHarness } from '../support/harness.js';
import { postJson } from '../support/http.js';
import { basic, exportedLines as exportedLinesOf, hourText, insertIds } from './project-export.js';
import { linesOf, readExportZip } from './zip-reader.js';

let h: Harness;
let dir: string;
let archive: string;
let sourceLines: string[];
const DATASET = { users: 600 };
/**
 * A user whose properties change between events, sent after the dataset (in one request, so
 * that the import sends them in one batch, in order): an anonymous first event, `$identify`
 * updates (set, set once, unset, add, clear all), plain user properties on events over the
 * profile, a purchase and a changing app version.
 */
const T = Date.UTC(2026, 1, 10, 12);
const ASOF = { user_id: 'user-asof', device_id: 'device-asof' };
const ASOF_EVENTS = [
  { event_type: 'Open App', device_id: 'device-asof', time: T, app_version: '1.0', user_properties: { source: 'ad' } },
  { event_type: '$identify', ...ASOF, time: T + 1000, user_properties: { $set: { plan: 'free', seats: 1 }, $setOnce: { source: 'organic' } } },
  { event_type: 'Search', ...ASOF, time: T + 2000, app_version: '1.0', user_properties: { plan: 'trial', theme: 'dark' } },
  { event_type: 'Purchase', ...ASOF, time: T + 3000, app_version: '1.1', price: 5, quantity: 2, revenue: 10 },
  { event_type: '$identify', ...ASOF, time: T + 4000, user_properties: { $set: { plan: 'pro' }, $unset: { seats: '-' }, $add: { logins: 2 } } },
  { event_type: 'View Item', ...ASOF, time: T + 5000, app_version: '2.0' },
  { event_type: '$identify', ...ASOF, time: T + 6000, user_properties: { $clearAll: '-', $set: { plan: 'team' } } },
  { event_type: 'Share', ...ASOF, time: T + 7000, app_version: '2.0', user_properties: { theme: 'light' } },
].map((event, i) => ({ ...event, insert_id: `asof-${i}` }));
/** What the export writes of that user at each event, keys in order. */
const ASOF_EXPORTED: [string, unknown, boolean, string][] = [
  ['Open App', { source: 'ad' }, false, '1.0'],
  ['$identify', { plan: 'free', seats: 1, source: 'organic' }, false, '1.0'],
  ['Search', { plan: 'trial', seats: 1, source: 'organic', theme: 'dark' }, false, '1.0'],
  ['Purchase', { plan: 'free', seats: 1, source: 'organic' }, true, '1.0'],
  ['$identify', { plan: 'pro', source: 'organic', logins: 2 }, true, '1.0'],
  ['View Item', { plan: 'pro', source: 'organic', logins: 2 }, true, '1.0'],
  ['$identify', { plan: 'team' }, true, '1.0'],
  ['Share', { plan: 'team', theme: 'light' }, true, '1.0'],
];
/** The command as users run it (the built server). */
const BIN = fileURLToPath(new URL('../../bin/svc-server.mjs', import.meta.url));
const exportedLines = (project: { api_key: string; secret_key: string }) => exportedLinesOf(h, project);
const freshProject = (name: string): IssuedProject => h.server.tenancy.createProject(h.project.org_id, name);
const importInto = (project: { api_key: string }, options: Partial<ImportOptions> = {}) =>
  runImport({ source: archive, url: h.direct, apiKey: project.api_key, statePath: join(dir, `${project.api_key}.state.json`), backoffMs: 50, ...options });

beforeAll(async () => {
  // Both projects' answers to every question fit in the cost budget.
  h = await startHarness(['app'], { reportingLimits: { concurrentRequests: 5, costPerFiveMinutes: 50_000, costPerHour: 1_000_000_000 } });
  dir = mkdtempSync(join(tmpdir(), 'svc-import-test-'));
  for (const batch of [...generateBatches(DATASET), ASOF_EVENTS]) expect((await postJson(`${h.direct}/batch`, { api_key: h.project.api_key, events: batch })).status).toBe(200);
  await h.server.store.flush();
  const response = await fetch(`${h.direct}/api/2/export?start=${hourText(Date.now() - 3_600_000)}&end=${hourText(Date.now())}`, { headers: basic(h.project) });
  expect(response.status).toBe(200);
  archive = join(dir, 'export.zip');
  writeFileSync(archive, Buffer.from(await response.arrayBuffer()));
  sourceLines = (await readExportZip(readFileSync(archive))).flatMap(linesOf);
}, 180_000);
afterAll(async () => {
  await h?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Query parameters as the API takes them: objects as JSON, funnels' `e` repeated. */
function queryString(params: Record<string, unknown>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    for (const item of name === 'e' && Array.isArray(value) ? value : [value]) query.append(name, typeof item === 'object' ? JSON.stringify(item) : String(item));
  }
  return query.toString();
}

const RANGE = { start: '20260119', end: '20260301' };
const QUESTIONS: [string, Record<string, unknown>][] = [
  ...['A', 'B', 'C', 'Purchase', '_all'].flatMap((eventType) => (['totals', 'uniques'] as const).map((m): [string, Record<string, unknown>] => ['/api/2/events/segmentation', { ...RANGE, e: { event_type: eventType }, m }])),
  ['/api/2/events/segmentation', { ...RANGE, e: { event_type: 'A', group_by: [{ type: 'user', value: 'country' }] }, m: 'uniques' }],
  ['/api/2/funnels', { ...RANGE, e: [{ event_type: 'A' }, { event_type: 'B' }, { event_type: 'C' }] }],
  ['/api/2/users', { ...RANGE, m: 'active' }],
  ['/api/2/users', { ...RANGE, m: 'new' }],
  // The purchases' revenue (price × quantity) crosses among the exported event properties.
  ['/api/2/revenue/ltv', { ...RANGE, m: 2 }],
  // User properties at event time: the profile's, the events' own over it, paying and start_version.
  ...['gp:plan', 'gp:tags', 'gp:logins', 'gp:cohort_day', 'gp:variant', 'gp:theme', 'gp:source', 'gp:seats', 'paying', 'start_version', 'version'].map((property): [string, Record<string, unknown>] => [
    '/api/2/events/segmentation',
    { ...RANGE, e: { event_type: '_all', group_by: [{ type: 'user', value: property }] }, m: 'totals', limit: 1000 },
  ]),
  ['/api/2/events/segmentation', { ...RANGE, e: { event_type: '_active' }, m: 'uniques', s: [{ prop: 'gp:plan', op: 'is', values: ['pro', 'trial'] }] }],
  ['/api/2/users', { ...RANGE, m: 'active', g: 'paying' }],
];

async function answers(project: { api_key: string; secret_key: string }): Promise<unknown[]> {
  const all: unknown[] = [];
  for (const [path, params] of QUESTIONS) {
    const reply = await fetch(`${h.direct}${path}?${queryString(params)}`, { headers: basic(project) });
    expect(reply.status, path).toBe(200);
    all.push(((await reply.json()) as { data: unknown }).data);
  }
  return all;
}

describe('a round trip through the export', () => {
  let imported: IssuedProject;

  test('the imported project answers as the exported one, with the same events', async () => {
    imported = freshProject('Imported');
    const summary = await importInto(imported);
    expect(summary).toMatchObject({ lines: sourceLines.length, sent: sourceLines.length, accepted: sourceLines.length, interrupted: false, problems: [] });
    expect(summary.skipped.size).toBe(0);
    expect(summary.hoursDone).toBe(summary.hoursTotal);
    const lines = await exportedLines(imported);
    expect(lines.length).toBe(sourceLines.length);
    expect(new Set(insertIds(lines))).toEqual(new Set(insertIds(sourceLines)));
    const [before, after] = [await answers(h.project), await answers(imported)];
    expect(after).toEqual(before);
    // The answers count something: the test would notice an empty import.
    expect(JSON.stringify(before)).toMatch(/[1-9]/);
  }, 120_000);

  test("the lines carry each user's properties, paying and start_version at the event, before and after the import", async () => {
    const ofUser = (lines: string[]) =>
      lines
        .map((line) => JSON.parse(line))
        .filter((event) => event.device_id === 'device-asof')
        .map((event) => [event.event_type, event.user_properties, event.paying, event.start_version]);
    const exported = ofUser(sourceLines);
    expect(exported).toEqual(ASOF_EXPORTED);
    // Keys in order: the profile's, then the event's own others.
    expect(exported.map(([, properties]) => JSON.stringify(properties))).toEqual(ASOF_EXPORTED.map(([, properties]) => JSON.stringify(properties)));
    // Imported, the events carry those properties as their own: exported again, they are the same.
    expect(ofUser(await exportedLines(imported))).toEqual(ASOF_EXPORTED);
  });

  test('importing the same export again stores nothing new', async () => {
    const summary = await importInto(imported, { statePath: join(dir, 'another.state.json') });
    expect(summary.accepted).toBe(sourceLines.length);
    expect((await exportedLines(imported)).length).toBe(sourceLines.length);
    // With its state, a run again has nothing left to send.
    expect(await importInto(imported)).toMatchObject({ lines: 0, sent: 0, hoursTotal: 0 });
  }, 120_000);
});

describe('an interrupted import', () => {
  /** An import stopped once `batches` batches were acknowledged. */
  async function interrupted(project: IssuedProject, batches: number) {
    const stop = new AbortController();
    const summary = await importInto(project, { batchSize: 500, concurrency: 2, signal: stop.signal, onProgress: (p) => p.batches >= batches && stop.abort() });
    expect(summary.interrupted).toBe(true);
    expect(summary.accepted).toBeLessThan(sourceLines.length);
    return summary;
  }

  test('stopped after a few batches, it resumes from its state and stores every event once', async () => {
    const project = freshProject('Resumed');
    await interrupted(project, 3);
    const resumed = await importInto(project);
    expect(resumed.interrupted).toBe(false);
    const lines = await exportedLines(project);
    expect(lines.length).toBe(sourceLines.length);
    expect(new Set(insertIds(lines)).size).toBe(lines.length);
  }, 120_000);

  test('killed with SIGKILL mid-way (a crash), the command resumes from its state and stores every event once', async () => {
    const project = freshProject('Killed');
    const statePath = join(dir, 'killed.state.json');
    // A proxy in front of the server: the command is killed once it has had some batches acknowledged.
    let acknowledged = 0;
    let command: ChildProcess | undefined;
    const proxy = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk)).on('end', async () => {
        const answer = await fetch(`${h.direct}${request.url}`, { method: request.method, headers: { 'content-type': request.headers['content-type'] ?? '' }, body: Buffer.concat(chunks) });
        response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(Buffer.from(await answer.arrayBuffer()));
        if (++acknowledged === 6) command?.kill('SIGKILL');
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const run = (url: string) =>
      new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
        command = spawn(process.execPath, [BIN, 'import', archive, '--url', url, '--api-key', project.api_key, '--state', statePath, '--batch-size', '200', '--concurrency', '2'], { stdio: 'ignore' });
        command.on('exit', (code, signal) => resolve({ code, signal }));
      });
    try {
      expect(await run(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}`)).toEqual({ code: null, signal: 'SIGKILL' });
      const stored = await exportedLines(project);
      expect(stored.length).toBeGreaterThan(0);
      expect(stored.length).toBeLessThan(sourceLines.length);
    } finally {
      proxy.close();
    }
    expect(await run(h.direct)).toEqual({ code: 0, signal: null });
    const lines = await exportedLines(project);
    expect(lines.length).toBe(sourceLines.length);
    expect(new Set(insertIds(lines))).toEqual(new Set(insertIds(sourceLines)));
  }, 120_000);

  test('with its state file cut, it says so, starts over and stores every event once', async () => {
    const project = freshProject('Cut state');
    await interrupted(project, 2);
    const statePath = join(dir, `${project.api_key}.state.json`);
    truncateSync(statePath, Math.floor(readFileSync(statePath).length / 2));
    const warnings: string[] = [];
    const resumed = await importInto(project, { onWarning: (message) => warnings.push(message) });
    expect(warnings.join('\n')).toMatch(/state file .* is unreadable/);
    expect(resumed.lines).toBe(sourceLines.length);
    const lines = await exportedLines(project);
    expect(lines.length).toBe(sourceLines.length);
    expect(new Set(insertIds(lines)).size).toBe(lines.length);
  }, 120_000);
});

/** A zip of one hour entry holding these lines. */
function zipOf(lines: string[]): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  zip.addBuffer(gzipSync(`${lines.join('\n')}\n`), '1/1_2026-01-20_9#0.json.gz', { compress: false });
  zip.end();
  const chunks: Buffer[] = [];
  return new Promise((resolve, reject) => {
    zip.outputStream.on('data', (chunk: Buffer) => chunks.push(chunk)).on('end', () => resolve(Buffer.concat(chunks))).on('error', reject);
  });
}

describe('bad input', () => {
  test('a corrupt zip, non-JSON lines and events the batch API refuses are reported and skipped', async () => {
    const folder = join(dir, 'folder');
    mkdirSync(folder);
    writeFileSync(join(folder, 'a-corrupt.zip'), Buffer.from('PK\u0003\u0004 this is not a zip at all'));
    copyFileSync(archive, join(folder, 'b-export.zip'));
    const good = { ...JSON.parse(sourceLines[0]!), $insert_id: 'bad-input-good' };
    writeFileSync(
      join(folder, 'c-lines.zip'),
      await zipOf(['{"event_type": "cut', JSON.stringify({ ...good, event_type: null }), JSON.stringify({ ...good, $insert_id: 'bad-input-lat', location_lat: 123 }), JSON.stringify(good)]),
    );
    const project = freshProject('Bad input');
    const summary = await importInto(project, { source: folder });
    expect(summary.problems).toEqual([expect.stringMatching(/^a-corrupt\.zip: not a readable zip archive/)]);
    expect(summary.skipped).toEqual(new Map([['not JSON', 1], ['no event_type', 1], ['invalid location_lat', 1]]));
    expect(summary.accepted).toBe(sourceLines.length + 1);
    expect((await exportedLines(project)).length).toBe(sourceLines.length + 1);
  }, 120_000);

  test('a wrong API key is a clear error', async () => {
    await expect(importInto({ api_key: 'not-a-key' })).rejects.toThrow(ImportError);
    await expect(importInto({ api_key: 'not-a-key' })).rejects.toThrow(/answered 400 \(Invalid API key\): the API key is not one of its projects'/);
  });
});

describe('the command', () => {
  test('svc-server import prints its summary and keeps its state beside the source', async () => {
    const folder = join(dir, 'command');
    mkdirSync(folder);
    copyFileSync(archive, join(folder, 'export.zip'));
    const project = freshProject('Command');
    const printed: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((line: string) => void printed.push(line));
    const warn = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      await main(['import', folder, '--url', `${h.direct}/`, '--api-key', project.api_key, '--batch-size', '1000']);
    } finally {
      log.mockRestore();
      warn.mockRestore();
    }
    const count = sourceLines.length.toLocaleString('en-US');
    expect(printed[0]).toBe(`import done: ${count} lines read, ${count} events sent, ${count} stored (or already stored under their insert_id), 0 skipped`);
    expect(printed[1]).toMatch(/^ {2}\d+\/\d+ hours in [\d.]+ s, [\d,]+ events\/s$/);
    expect(printed.at(-1)).toBe(`  state: ${folder}.import-state.json`);
    expect(JSON.parse(readFileSync(`${folder}.import-state.json`, 'utf8')).files).toEqual([expect.objectContaining({ name: 'export.zip', done: true })]);
    await expect(main(['import', folder, '--url', h.direct])).rejects.toThrow(/import needs a source .*, --url and --api-key/);
    await expect(main(['import', join(dir, 'missing.zip'), '--url', h.direct, '--api-key', project.api_key])).rejects.toThrow(/missing\.zip: no such export zip or folder/);
  }, 120_000);
});

describe('retries', () => {
  /** Imports one exported event into a target that answers `answers` in turn (then 200); the retries' reasons and the requests' times. */
  async function importAgainst(name: string, answers: { status: number; body: object; retryAfter?: string }[]) {
    const seen: number[] = [];
    const target = createServer((request, response) => {
      request.resume().on('end', () => {
        const answer = answers.shift() ?? { status: 200, body: { code: 200, events_ingested: 1 } };
        seen.push(Date.now());
        response.writeHead(answer.status, { 'content-type': 'application/json', ...(answer.retryAfter ? { 'retry-after': answer.retryAfter } : {}) });
        response.end(JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    try {
      const folder = join(dir, name);
      mkdirSync(folder);
      writeFileSync(join(folder, 'one.zip'), await zipOf([sourceLines[0]!]));
      const retries: string[] = [];
      const summary = await runImport({ source: folder, url: `http://127.0.0.1:${(target.address() as AddressInfo).port}`, apiKey: 'k', backoffMs: 10, onRetry: (reason) => retries.push(reason) });
      return { summary, retries, seen };
    } finally {
      target.close();
    }
  }

  test('429 and 503 are retried after Retry-After, then the batch is sent', async () => {
    const busy = (status: number) => ({ code: status, error: 'busy' });
    const { summary, retries, seen } = await importAgainst('retry', [{ status: 429, body: busy(429), retryAfter: '1' }, { status: 503, body: busy(503) }]);
    expect(retries).toEqual(['429 busy', '503 busy']);
    expect(seen[1]! - seen[0]!).toBeGreaterThanOrEqual(1000);
    expect(summary).toMatchObject({ accepted: 1, hoursDone: 1 });
  });

  test("a silenced device's 400 is waited out as a 429 is, not counted as refused", async () => {
    const silenced = { code: 400, error: 'Too many requests for this device', silenced_devices: ['d'], silenced_events: [0] };
    const { summary, retries } = await importAgainst('silenced', [{ status: 400, body: silenced }]);
    expect(retries).toEqual(['400 Too many requests for this device']);
    expect(summary).toMatchObject({ accepted: 1, hoursDone: 1 });
    expect(summary.skipped.size).toBe(0);
  });
});
