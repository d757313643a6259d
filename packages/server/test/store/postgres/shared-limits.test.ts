// The reporting limits of several server processes on one PostgreSQL database: each process
// has its own pool and limits object (here two sessions), and a project gets the documented
// limits once, not once per process.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type PostgresServer, startPostgres } from '../../../../../scripts/postgres/start.mjs';
import type { Admission, LimitFigures } from '../../../src/shared/reporting-limits.js';
import { type RunningServer, startServer } from '../../../src/server.js';
import { type PostgresLimitOptions, PostgresReportingLimits } from '../../../src/store/postgres/reporting-limits.js';
import { postgresSession, type PostgresSession } from '../../../src/store/postgres/sql-session.js';

const MINUTE = 60_000;
const START = Date.UTC(2026, 10, 1);
let postgres: PostgresServer;
const opened: { limits: PostgresReportingLimits; session: PostgresSession }[] = [];

/** The limits of one more process. */
function processLimits(options: PostgresLimitOptions = {}) {
  const session = postgresSession(postgres.url, { maxConnections: 4 });
  const limits = new PostgresReportingLimits(session, { log: () => undefined, ...options });
  opened.push({ limits, session });
  return { limits, session };
}

const release = (admission: Admission) => {
  if (!('release' in admission)) throw new Error(`refused: ${admission.message}`);
  admission.release();
};

beforeAll(async () => {
  postgres = await startPostgres();
});

afterAll(async () => {
  for (const { limits, session } of opened) {
    await limits.close();
    await session.close().catch(() => undefined);
  }
  await postgres?.stop();
});

test('requests running in two processes count against one limit of 5; a release frees a slot for either', async () => {
  const [a, b] = [processLimits().limits, processLimits().limits];
  const running = [...(await Promise.all([1, 2, 3].map(() => a.admit(1, 1, START)))), ...(await Promise.all([1, 2].map(() => b.admit(1, 1, START))))];
  expect(running.every((admission) => 'release' in admission)).toBe(true);
  expect(await a.admit(1, 1, START)).toMatchObject({ exceeded: 'concurrent_requests', retryAfterSeconds: 1 });
  expect(await b.admit(1, 1, START)).toMatchObject({ exceeded: 'concurrent_requests' });
  expect(await b.admit(2, 1, START)).toHaveProperty('release');
  release(running[4]!);
  // A release returns before its row is deleted: the other process sees the free slot soon after.
  await expect.poll(() => a.admit(1, 1, START)).toHaveProperty('release');
  expect(await b.admit(1, 1, START)).toMatchObject({ exceeded: 'concurrent_requests' });
});

test('20 admissions at once across two processes: exactly 5 pass', async () => {
  const [a, b] = [processLimits().limits, processLimits().limits];
  const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).admit(3, 1, START)));
  expect(answers.filter((answer) => 'release' in answer)).toHaveLength(5);
  expect(answers.filter((answer) => 'exceeded' in answer && answer.exceeded === 'concurrent_requests')).toHaveLength(15);
});

test('cost spent in one process is seen by the other: 1000 per rolling five minutes, 2500 per rolling hour here', async () => {
  const figures: LimitFigures = { concurrentRequests: 100, costPerFiveMinutes: 1000, costPerHour: 2500 };
  const [a, b] = [processLimits({ figures }), processLimits({ figures })];
  const spend = async (limits: PostgresReportingLimits, cost: number, at: number) => {
    const admission = await limits.admit(4, cost, START + at);
    if ('release' in admission) admission.release();
    return admission;
  };
  expect(await spend(a.limits, 600, 0)).toHaveProperty('release');
  expect(await spend(b.limits, 500, MINUTE)).toMatchObject({ exceeded: 'concurrent_cost', retryAfterSeconds: 300 });
  expect(await spend(b.limits, 400, MINUTE)).toHaveProperty('release');
  expect(await spend(a.limits, 1000, 6 * MINUTE)).toHaveProperty('release');
  expect(await spend(b.limits, 1000, 12 * MINUTE)).toMatchObject({ exceeded: 'hourly_cost', retryAfterSeconds: 3600 });
  expect(await spend(b.limits, 1000, 61 * MINUTE)).toHaveProperty('release');
  // Costs older than the hour (at 0 and 1 minute) are deleted as the project's requests are admitted.
  const kept = await a.session.rows('SELECT second FROM reporting_costs WHERE app_id = 4 ORDER BY second');
  expect(kept).toEqual([6, 61].map((minutes) => ({ second: (START + minutes * MINUTE) / 1000 })));
});

test("a dead process's slots are freed once its lease runs out", async () => {
  const dead = processLimits({ leaseSeconds: 3 });
  const held = await Promise.all(Array.from({ length: 5 }, () => dead.limits.admit(5, 1, START)));
  expect(held.every((admission) => 'release' in admission)).toBe(true);
  // The process ends without releasing: its connections close, its lease is no longer renewed.
  await dead.session.close();
  const other = processLimits().limits;
  expect(await other.admit(5, 1, START)).toMatchObject({ exceeded: 'concurrent_requests' });
  await new Promise((resolve) => setTimeout(resolve, 3_500));
  expect(await other.admit(5, 1, START)).toHaveProperty('release');
});

test('a running process keeps its slots past its lease (it renews it)', async () => {
  const live = processLimits({ leaseSeconds: 2 }).limits;
  const held = await Promise.all(Array.from({ length: 5 }, () => live.admit(6, 1, START)));
  expect(held.every((admission) => 'release' in admission)).toBe(true);
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  expect(await processLimits().limits.admit(6, 1, START)).toMatchObject({ exceeded: 'concurrent_requests' });
});

test('two servers on one PostgreSQL database: queries to both count against one cost budget (429 naming the limit)', async () => {
  const shared = mkdtempSync(join(tmpdir(), 'svc-shared-limits-'));
  const dirs = [0, 1].map(() => mkdtempSync(join(tmpdir(), 'svc-shared-limits-')));
  // A 30-day query costs 30: the first fits the budget of 50, the second (on the other server) not.
  const config = { sharedDir: shared, host: '127.0.0.1', port: 0, postgresUrl: postgres.url, reportingLimits: { concurrentRequests: 5, costPerFiveMinutes: 50, costPerHour: 108_000 } };
  const servers: RunningServer[] = [];
  try {
    for (const dataDir of dirs) servers.push(await startServer({ ...config, dataDir }));
    const project = servers[0]!.tenancy.createProject(servers[0]!.tenancy.createOrganization('Org').id, 'Project');
    servers[1]!.tenancy.reload();
    const authorization = `Basic ${Buffer.from(`${project.api_key}:${project.secret_key}`).toString('base64')}`;
    const query = (server: RunningServer) => fetch(`${server.urls.app}/api/2/users?start=20261001&end=20261030`, { headers: { authorization } });
    expect((await query(servers[0]!)).status).toBe(200);
    const refused = await query(servers[1]!);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ code: 429, exceeded_limit: 'concurrent_cost' });
  } finally {
    for (const server of servers) await server.close();
    for (const dir of [shared, ...dirs]) rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
