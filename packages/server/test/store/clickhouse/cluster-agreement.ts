// What the cluster tests (replicas, shards) ask of both engines: some of the reporting oracle's
// questions, answered by DuckDB and by ClickHouse through the cluster, and a load run again
// as the server's loader does until storage answers.
import { expect } from 'vitest';
import type { ReportRange } from '../../../src/model/time.js';
import type { RunnerContext } from '../../../src/reporting/runners/context.js';
import { funnel } from '../../../src/reporting/runners/funnels.js';
import { segmentation } from '../../../src/reporting/runners/segmentation.js';
import { userCounts } from '../../../src/reporting/runners/users.js';
import { isUnavailable } from '../../../src/shared/unavailable.js';
import { ClickHouseDialect } from '../../../src/store/clickhouse/dialect.js';
import type { ClickHouseEngine } from '../../../src/store/clickhouse/engine.js';
import { DuckDbDialect } from '../../../src/store/duckdb/dialect.js';
import type { DuckDbEngine } from '../../../src/store/duckdb/engine.js';

export interface Question {
  appId: number;
  range: ReportRange;
  /** The reports' "now" (ms). */
  now: number;
}

/** Active and new users (from the kept activity), a filtered scan, uniques by country, an ordered 3-step funnel. */
async function answers(engine: DuckDbEngine | ClickHouseEngine, duck: boolean, { appId, range, now }: Question) {
  const common = { appId, timeZone: 'UTC', now: () => now, query: (sql: string) => engine.query(sql), queryChunks: (sql: string) => engine.queryChunks(sql) };
  const ctx: RunnerContext = duck
    ? { ...common, dialect: new DuckDbDialect({ userMappings: false }) }
    : { ...common, dialect: new ClickHouseDialect({ userMappings: false }), timelineCounts: (query) => (engine as ClickHouseEngine).timelineCounts(query) };
  const selector = (eventType: string) => ({ eventType, conditions: [] });
  return {
    active: await userCounts(ctx, { range, metric: 'active', interval: 'day', segment: [] }),
    new: await userCounts(ctx, { range, metric: 'new', interval: 'week', segment: [] }),
    scanned: await userCounts(ctx, { range, metric: 'active', interval: 'week', segment: [{ property: { kind: 'builtIn', name: 'country' }, op: 'is', values: ['Germany', 'France'] }] }),
    byCountry: await segmentation(ctx, { metric: 'uniques', interval: 'week', events: [selector('_active')], groupBy: [{ kind: 'builtIn', name: 'country' }], segment: [], limit: 100, activeUsersOnly: false, range }),
    funnel: await funnel(ctx, { range, steps: [selector('A'), selector('B'), selector('C')], mode: 'ordered', windowSeconds: 2 * 86_400, segment: [], limit: 10 }),
  };
}

/**
 * ClickHouse answers the questions as DuckDB does (and DuckDB counts some users): as it answers
 * them at once, and again once the work they started in the background is done (the local days
 * of the zone, local-days.ts).
 */
export async function expectAgreement(duck: DuckDbEngine, ch: ClickHouseEngine, question: Question): Promise<void> {
  const expected = await answers(duck, true, question);
  expect(expected.active.series[0]!.collapsed, 'users counted').toBeGreaterThan(0);
  expect(await answers(ch, false, question)).toEqual(expected);
  await ch.timelinesBuilt();
  expect(await answers(ch, false, question)).toEqual(expected);
}

/** Loads the segment as the server's loader does: again after a failure of unavailable storage, until it succeeds. */
export async function loadUntilDone(ch: ClickHouseEngine, path: string, name: string): Promise<void> {
  for (;;) {
    const failure = await ch.loadSegment(path, name).then(() => undefined, (error: unknown) => error);
    if (failure === undefined) return;
    if (!isUnavailable(failure)) throw failure;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
