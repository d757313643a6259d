// `svc-server import` straight from a project's Export API (this server's, behind a proxy that
// plays the platform's faults): the range asked for part by part, every event stored once,
// hours without data (404) done, a part refused as too large (400) asked for in halves, 429 and
// 503 retried, a run that gave up resumes from its state without asking again for what it
// stored, refused source keys are a clear error, and the command reads the keys from the
// environment.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { main } from '../../src/cli.js';
import type { ExportApiSource } from '../../src/export/import/export-api.js';
import { ImportError } from '../../src/export/import/retrying.js';
import { type ImportOptions, runImport } from '../../src/export/import/run-import.js';
import type { IssuedProject } from '../../src/shared/tenancy.js';
import { generateBatches } from '../reporting/dataset.js';
import { type Harness, startHarness } from '../support/harness.js';
import { postJson } from '../support/http.js';
import { exportedLines, hourText, insertIds } from './project-export.js';

const HOUR_MS = 3_600_000;
let h: Harness;
let dir: string;
let sourceLines: string[];

/** What the proxy answers instead of forwarding: by the request's number (from 1), or by its range. */
interface Faults {
  answer?: (request: { n: number; start: string; end: string }) => { status: number; headers?: Record<string, string>; error: string } | undefined;
}

/** A proxy in front of the server's Export API: counts the requests, plays the faults asked for. */
async function startSource(faults: Faults = {}): Promise<{ url: string; requests: string[]; close: () => void }> {
  const requests: string[] = [];
  const proxy: Server = createServer((request, response) => {
    const query = new URL(request.url!, 'http://source').searchParams;
    const [start, end] = [query.get('start')!, query.get('end')!];
    requests.push(`${start}-${end}`);
    const fault = faults.answer?.({ n: requests.length, start, end });
    if (fault) {
      response.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers });
      return response.end(JSON.stringify({ code: fault.status, error: fault.error }));
    }
    fetch(`${h.direct}${request.url}`, { headers: { authorization: request.headers.authorization ?? '' } })
      .then(async (answer) => {
        response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/octet-stream' });
        response.end(Buffer.from(await answer.arrayBuffer()));
      })
      .catch(() => response.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, requests, close: () => proxy.close() };
}

/** Four hours around now: two before the events' hour, which hold none (404). */
const range = () => ({ start: hourText(Date.now() - 2 * HOUR_MS), end: hourText(Date.now() + HOUR_MS) });
const sourceOf = (url: string, options: Partial<ExportApiSource> = {}): ExportApiSource => ({ url, apiKey: h.project.api_key, secretKey: h.project.secret_key, ...range(), partHours: 2, ...options });
const importFrom = (source: ExportApiSource, project: IssuedProject, options: Partial<ImportOptions> = {}) =>
  runImport({ source, url: h.direct, apiKey: project.api_key, statePath: join(dir, `${project.api_key}.state.json`), backoffMs: 20, ...options });
const freshProject = (name: string): IssuedProject => h.server.tenancy.createProject(h.project.org_id, name);

beforeAll(async () => {
  h = await startHarness(['app']);
  dir = mkdtempSync(join(tmpdir(), 'svc-import-api-test-'));
  for (const batch of generateBatches({ users: 150 })) expect((await postJson(`${h.direct}/batch`, { api_key: h.project.api_key, events: batch })).status).toBe(200);
  sourceLines = await exportedLines(h, h.project);
  expect(sourceLines.length).toBeGreaterThan(1000);
}, 180_000);
afterAll(async () => {
  await h?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('an import from an Export API', () => {
  test('part by part: every event once; 404 hours done, a part too large in halves, 429 and 503 retried', async () => {
    const retried: string[] = [];
    const warnings: string[] = [];
    // The first request is throttled, the second fails; a part of more than one hour is too large.
    const source = await startSource({
      answer: ({ n, start, end }) =>
        n === 1 ? { status: 429, headers: { 'retry-after': '1' }, error: 'Too many requests' } : n === 2 ? { status: 503, error: 'Unavailable' } : start !== end ? { status: 400, error: 'The export is larger than 4 GB: choose a shorter range' } : undefined,
    });
    try {
      const project = freshProject('From the API');
      const summary = await importFrom(sourceOf(source.url), project, { onRetry: (reason) => retried.push(reason), onWarning: (message) => warnings.push(message) });
      expect(retried).toEqual(['429 Too many requests', '503 Unavailable']);
      expect(warnings.filter((w) => /asking for it in two halves/.test(w))).toHaveLength(2);
      // Two parts of two hours, each refused, then asked for hour by hour.
      expect(source.requests).toHaveLength(2 + 2 + 4);
      expect(summary).toMatchObject({ lines: sourceLines.length, accepted: sourceLines.length, hoursDone: 4, hoursTotal: 4, problems: [], interrupted: false });
      const lines = await exportedLines(h, project);
      expect(new Set(insertIds(lines))).toEqual(new Set(insertIds(sourceLines)));
      expect(lines.length).toBe(sourceLines.length);

      // A run again asks for nothing: the state records every part.
      const again = await startSource();
      try {
        expect(await importFrom(sourceOf(again.url), project)).toMatchObject({ lines: 0, hoursTotal: 0 });
        expect(again.requests).toEqual([]);
      } finally {
        again.close();
      }
    } finally {
      source.close();
    }
  }, 120_000);

  test('a run that gives up on a failing source resumes where it stopped and stores every event once', async () => {
    const project = freshProject('Resumed from the API');
    const { start, end } = range();
    // Hour by hour: the events' hour (the third) keeps failing, so the first two are done before the run gives up.
    const failing = await startSource({ answer: ({ n }) => (n >= 3 ? { status: 502, error: 'Bad gateway' } : undefined) });
    try {
      await expect(importFrom(sourceOf(failing.url, { partHours: 1 }), project, { maxAttempts: 2 })).rejects.toThrow(/502 Bad gateway, 2 times; the state is kept: run the import again to resume/);
    } finally {
      failing.close();
    }
    const state = JSON.parse(readFileSync(join(dir, `${project.api_key}.state.json`), 'utf8')) as { files: { name: string; done: boolean }[] };
    expect(state.files.filter((file) => file.done).map((file) => file.name)).toHaveLength(2);
    const healthy = await startSource();
    try {
      const summary = await importFrom(sourceOf(healthy.url, { partHours: 1 }), project);
      expect(healthy.requests).toHaveLength(2);
      expect(healthy.requests[0]).not.toBe(`${start}-${start}`);
      expect(healthy.requests.at(-1)).toBe(`${end}-${end}`);
      expect(summary.accepted).toBe(sourceLines.length);
      expect((await exportedLines(h, project)).length).toBe(sourceLines.length);
    } finally {
      healthy.close();
    }
  }, 120_000);

  test("another source project's parts are not taken for done ones, with the same state file", async () => {
    const project = freshProject('Two sources');
    const statePath = join(dir, 'two-sources.state.json');
    expect(await importFrom(sourceOf(h.direct), project, { statePath })).toMatchObject({ accepted: sourceLines.length });
    const theirs = [1, 2, 3].map((n) => ({ event_type: 'Other', user_id: `other-${n}`, insert_id: `other-source-${n}` }));
    expect((await postJson(`${h.direct}/batch`, { api_key: h.otherProject.api_key, events: theirs })).status).toBe(200);
    await h.server.store.flush();
    const other = sourceOf(h.direct, { apiKey: h.otherProject.api_key, secretKey: h.otherProject.secret_key });
    expect(await importFrom(other, project, { statePath })).toMatchObject({ lines: 3, accepted: 3 });
    expect((await exportedLines(h, project)).length).toBe(sourceLines.length + 3);
  }, 120_000);

  test("the source's refusal of its keys is a clear error", async () => {
    const source = sourceOf(h.direct, { secretKey: 'not-the-secret' });
    await expect(importFrom(source, freshProject('Refused'))).rejects.toThrow(ImportError);
    await expect(importFrom(source, freshProject('Refused again'))).rejects.toThrow(/answered 401 .*: the source refused the API key and secret key/);
  });

  test('a range that is not hours is a clear error', async () => {
    await expect(importFrom(sourceOf(h.direct, { start: '2026-01-01' }), freshProject('Bad range'))).rejects.toThrow(/start is an hour as YYYYMMDDTHH/);
    await expect(importFrom(sourceOf(h.direct, { start: '20260102T00', end: '20260101T00' }), freshProject('Backwards'))).rejects.toThrow(/end \(20260101T00\) is an hour at or after start/);
  });
});

describe('the command', () => {
  test("svc-server import URL reads the source's keys from the environment", async () => {
    const project = freshProject('Command from the API');
    const { start, end } = range();
    const args = ['import', h.direct, '--start', start, '--end', end, '--url', h.direct, '--api-key', project.api_key, '--state', join(dir, 'command.state.json')];
    await expect(main(args)).rejects.toThrow(/reads the source project's keys from SVC_SOURCE_API_KEY and SVC_SOURCE_SECRET_KEY/);
    await expect(main(['import', h.direct, '--url', h.direct, '--api-key', project.api_key])).rejects.toThrow(/needs --start and --end/);
    vi.stubEnv('SVC_SOURCE_API_KEY', h.project.api_key);
    vi.stubEnv('SVC_SOURCE_SECRET_KEY', h.project.secret_key);
    const printed: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((line: string) => void printed.push(line));
    const warn = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      await main(args);
    } finally {
      log.mockRestore();
      warn.mockRestore();
      vi.unstubAllEnvs();
    }
    const count = sourceLines.length.toLocaleString('en-US');
    expect(printed[0]).toBe(`import done: ${count} lines read, ${count} events sent, ${count} stored (or already stored under their insert_id), 0 skipped`);
    expect(printed[1]).toMatch(/^ {2}4\/4 hours in [\d.]+ s/);
  }, 120_000);
});
