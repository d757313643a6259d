// The forms' choices as the reporting API's queries, and the answers as the page shows them.
import type { FunnelSeries } from '@svc/client';
import { expect, test } from 'vitest';
import { toCsv } from '../src/csv.js';
import { lastDays } from '../src/dates.js';
import { formatDuration } from '../src/format.js';
import { funnelQuery } from '../src/funnel/query.js';
import { funnelTable } from '../src/funnel/model.js';
import { retentionTable } from '../src/retention/model.js';
import { retentionQuery } from '../src/retention/query.js';
import { segmentationChart, segmentationRows } from '../src/segmentation/model.js';
import { filterValues, segmentationQuery } from '../src/segmentation/query.js';
import { binLabel } from '../src/users/model.js';

test('a segmentation choice: the event with its filter and group-by, dates without dashes, limit only when grouped', () => {
  const range = { start: '2026-11-01', end: '2026-11-07' };
  expect(segmentationQuery({ event: 'Play', metric: 'totals', interval: 7, ...range })).toEqual({ e: { event_type: 'Play' }, m: 'totals', i: 7, start: '20261101', end: '20261107' });
  const grouped = segmentationQuery({
    event: 'Play',
    metric: 'uniques',
    interval: 1,
    ...range,
    groupBy: { owner: 'user', name: 'gp:plan', limit: 5 },
    filter: { owner: 'event', name: 'genre', operator: 'is', values: 'jazz, blues,' },
  });
  expect(grouped).toEqual({
    e: { event_type: 'Play', filters: [{ subprop_type: 'event', subprop_key: 'genre', subprop_op: 'is', subprop_value: ['jazz', 'blues'] }], group_by: [{ type: 'user', value: 'gp:plan' }] },
    m: 'uniques',
    i: 1,
    start: '20261101',
    end: '20261107',
    limit: 5,
  });
});

test('filter values: one number for the numeric operators, else the comma-separated texts', () => {
  expect(filterValues('greater or equal', ' 12.5 ')).toEqual([12.5]);
  expect(filterValues('contains', 'a,,b , c')).toEqual(['a', 'b', 'c']);
});

test('a funnel choice: one event specification per step, the window in seconds, g and limit when grouped', () => {
  const choice = { steps: ['View', 'Cart', 'Order'], mode: 'sequential' as const, windowSeconds: 3600, start: '2026-11-01', end: '2026-11-30' };
  expect(funnelQuery(choice)).toEqual({ e: [{ event_type: 'View' }, { event_type: 'Cart' }, { event_type: 'Order' }], mode: 'sequential', cs: 3600, start: '20261101', end: '20261130' });
  expect(funnelQuery({ ...choice, groupBy: { name: 'country', limit: 3 } })).toMatchObject({ g: 'country', limit: 3 });
});

test('segmentation rows: a row per period, then the whole range; series named by their group-by values', () => {
  const answer = { series: [[1, 2], [3, 4]], seriesLabels: [[0, 'iOS'], [0, 'Web']], seriesCollapsed: [[{ setId: '', value: 3 }], [{ setId: '', value: 6 }]], seriesMeta: [], xValues: ['2026-11-01', '2026-11-02'] };
  expect(segmentationRows(answer, 'Play')).toEqual({
    columns: ['Period', 'iOS', 'Web'],
    rows: [
      { header: '2026-11-01', values: [1, 3] },
      { header: '2026-11-02', values: [2, 4] },
      { header: 'Whole range', values: [3, 6] },
    ],
  });
});

test('the chart of a segmentation: hours on the axis without seconds, the single series named by its event', () => {
  const answer = { series: [[1, 2]], seriesLabels: [0], seriesCollapsed: [[{ setId: '', value: 3 }]], seriesMeta: [], xValues: ['2026-11-01T00:00:00', '2026-11-01T01:00:00'] };
  expect(segmentationChart(answer, 'Play')).toEqual({ labels: ['2026-11-01 00:00', '2026-11-01 01:00'], series: [{ name: 'Play', values: [1, 2] }] });
});

test('a funnel table: no time or step conversion before the first step, none for a step nobody reached', () => {
  const funnel = { groupValue: '', cumulativeRaw: [10, 4, 0], cumulative: [1, 0.4, 0], stepByStep: [1, 0.4, 0], medianTransTimes: [0, 90_000, 0] } as unknown as FunnelSeries;
  const table = funnelTable(funnel, ['View', 'Cart', 'Order']);
  expect(table.caption).toMatch(/^All users: 10 users entered, 0% completed$/);
  expect(table.rows.map((row) => [row.header, row.cells[2], row.cells[3]])).toEqual([
    ['1. View', '—', '—'],
    ['2. Cart', expect.stringMatching(/^40\s?%$/), '1 min 30 s'],
    ['3. Order', expect.stringMatching(/^0\s?%$/), '—'],
  ]);
});

test('durations in their two largest units', () => {
  expect([450, 42_000, 3_600_000, 5_400_000, 90_061_000].map(formatDuration)).toEqual(['450 ms', '42 s', '1 h', '1 h 30 min', '1 d 1 h']);
});

test('CSV: numbers as they are, text quoted when it must be, formulas defused', () => {
  expect(toCsv([['Period', 'a,b', 'say "hi"'], ['=SUM(A1)', 1.5, -2]])).toBe('Period,"a,b","say ""hi"""\r\n\'=SUM(A1),1.5,-2\r\n');
});

test('the default range: the last 30 days, today included', () => {
  expect(lastDays(new Date(2026, 2, 5), 30)).toEqual({ start: '2026-02-04', end: '2026-03-05' });
});

test('session length bins in the reader’s units', () => {
  expect(['0s-3s', '180s-600s', '3600s-86400s'].map(binLabel)).toEqual(['0 – 3 s', '3 min – 10 min', '1 h – 1 d']);
});

test('a retention choice: the start and return events as event specifications', () => {
  expect(retentionQuery({ startEvent: '_new', returnEvent: 'Play', mode: 'rolling', interval: 7, start: '2026-11-01', end: '2026-11-30' })).toEqual({
    se: { event_type: '_new' },
    re: { event_type: 'Play' },
    rm: 'rolling',
    i: 7,
    start: '20261101',
    end: '20261130',
  });
});

test('a retention table: the cohort’s users, then each column’s retained users and share, open columns marked', () => {
  const cell = (count: number, outof: number, incomplete = false) => ({ count, outof, incomplete });
  const retention = { dates: ['Nov 02'], values: { 'Nov 02': [cell(4, 4), cell(1, 4, true)] }, combined: [{ ...cell(4, 4), retainedSetId: null }, { ...cell(1, 4, true), retainedSetId: null }, { ...cell(0, 0), retainedSetId: null }] };
  const table = retentionTable(retention, 1, 'R');
  expect(table.columns).toEqual(['Cohort', 'Users', 'Day 0', 'Day 1']);
  expect(table.rows).toEqual([
    { header: 'All cohorts', cells: ['4', expect.stringMatching(/^1 \(25\s?%\) \*$/), expect.stringMatching(/^0 \(0\s?%\)$/)] },
    { header: 'Nov 02', cells: ['4', expect.stringMatching(/^1 \(25\s?%\) \*$/), '—'] },
  ]);
});
