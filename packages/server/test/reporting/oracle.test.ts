import { describe, expect, it } from 'vitest';
import { generateBatches, generateEvents, type UploadEvent } from './dataset.js';
import {
  composition, createOracle, eventsList, funnels, matches, segmentation, sessionAverage, sessionLength,
  sessionsPerUser, users,
} from './oracle.js';

const MONDAY = Date.UTC(2026, 2, 2); // 2026-03-02
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

function event(event_type: string, time: number, fields: Partial<UploadEvent> = {}): UploadEvent {
  return { event_type, time, device_id: fields.user_id ? undefined : 'd0', ...fields };
}

describe('identity', () => {
  it('joins an anonymous device to its first user, merges a known user, moves a device to a second user', () => {
    const oracle = createOracle([
      event('A', MONDAY, { device_id: 'd1' }),
      event('B', MONDAY + 1, { user_id: 'u1', device_id: 'd1' }),
      event('C', MONDAY + 2, { device_id: 'd2' }),
      event('D', MONDAY + 3, { user_id: 'u1', device_id: 'd2' }),
      event('E', MONDAY + 4, { user_id: 'u2', device_id: 'd1' }),
      event('F', MONDAY + 5, { device_id: 'd1' }),
    ]);
    expect(oracle.events.map((r) => r.svcId)).toEqual([1, 1, 1, 1, 3, 3]);
    expect(users(oracle, { start: '20260302', end: '20260302', m: 'active', i: 1 }).series).toEqual([[2]]);
  });
});

describe('user mapping', () => {
  it('a mapped user is its global user: active once, new once on the first event of either', () => {
    const oracle = createOracle([
      event('A', MONDAY, { user_id: 'phone' }),
      event('A', MONDAY + DAY, { user_id: 'laptop' }),
      event('A', MONDAY + DAY + 1, { user_id: 'phone' }),
    ], 'UTC', [{ userId: 'phone', globalUserId: 'laptop' }]);
    const twoDays = { start: '20260302', end: '20260303', i: 1 } as const;
    expect(users(oracle, { ...twoDays, m: 'new' })).toMatchObject({ series: [[1, 0]], seriesCollapsed: [[1]] });
    expect(users(oracle, { ...twoDays, m: 'active' })).toMatchObject({ series: [[1, 1]], seriesCollapsed: [[1]] });
  });
});

describe('time zones', () => {
  const zone = 'America/New_York';
  it('the spring-forward day has 23 hours and its late-evening events; hourly, its skipped hour is there with 0', () => {
    const oracle = createOracle([
      event('A', Date.UTC(2026, 2, 8, 5, 30), { user_id: 'a' }), // 00:30 EST, 8 March
      event('A', Date.UTC(2026, 2, 9, 3, 30), { user_id: 'b' }), // 23:30 EDT, 8 March
      event('A', Date.UTC(2026, 2, 9, 4, 30), { user_id: 'c' }), // 00:30 EDT, 9 March
    ], zone);
    expect(users(oracle, { start: '20260308', end: '20260309', m: 'active', i: 1 }))
      .toEqual({ xValues: ['2026-03-08', '2026-03-09'], series: [[2, 1]], seriesCollapsed: [[3]], seriesLabels: [0], seriesMeta: [{ segmentIndex: 0 }] });
    const hourly = segmentation(oracle, { start: '20260308', end: '20260308', e: { event_type: 'A' }, i: -3600000 });
    expect(hourly.xValues).toHaveLength(24);
    expect(hourly.xValues[2]).toBe('2026-03-08T02:00:00');
    expect(hourly.series[0]![0]).toBe(1);
    expect(hourly.series[0]![2]).toBe(0);
    expect(hourly.series[0]![23]).toBe(1);
  });

  it('hourly, the hour repeated when clocks go back is one bucket holding both', () => {
    const oracle = createOracle([
      event('A', Date.UTC(2026, 10, 1, 5, 30), { user_id: 'a' }), // 01:30 EDT, 1 November
      event('A', Date.UTC(2026, 10, 1, 6, 30), { user_id: 'b' }), // 01:30 EST, 1 November
    ], zone);
    const hourly = segmentation(oracle, { start: '20261101', end: '20261101', e: { event_type: 'A' }, i: -3600000, m: 'totals' });
    expect(hourly.xValues).toHaveLength(24);
    expect(hourly.series).toEqual([Array.from({ length: 24 }, (_, hour) => (hour === 1 ? 2 : 0))]);
  });

  it('weeks start on Monday and the first week bucket starts before the month edge', () => {
    const oracle = createOracle([
      event('A', Date.UTC(2026, 1, 28, 12), { user_id: 'before-range' }), // Saturday 28 February
      event('A', Date.UTC(2026, 2, 1, 12), { user_id: 'sunday' }), // Sunday 1 March
      event('A', Date.UTC(2026, 2, 2, 12), { user_id: 'monday' }),
    ]);
    const weekly = users(oracle, { start: '20260301', end: '20260310', m: 'active', i: 7 });
    expect(weekly.xValues).toEqual(['2026-02-23', '2026-03-02', '2026-03-09']);
    expect(weekly.series).toEqual([[1, 1, 0]]);
    const monthly = users(oracle, { start: '20260225', end: '20260305', m: 'new', i: 30 });
    expect(monthly.xValues).toEqual(['2026-02-01', '2026-03-01']);
    expect(monthly.series).toEqual([[1, 2]]);
  });
});

describe('filters', () => {
  it.each([
    ['is', ['3'], ['3', '4'], true],
    ['is', ['(none)'], ['(none)'], true],
    ['is not', ['3'], ['3', '4'], false],
    ['contains', ['shoes'], ['ho'], true],
    ['contains', ['Shoes'], ['sh'], false],
    ['does not contain', ['shoes'], ['x'], true],
    ['less', ['3'], ['4'], true],
    ['less', ['abc'], ['4'], false],
    ['less or equal', ['4'], ['4'], true],
    ['greater', ['4'], ['4'], false],
    ['greater or equal', ['4.5'], ['4'], true],
    ['set is', ['a', 'b'], ['b', 'a'], true],
    ['set is', ['a'], ['a', 'b'], false],
    ['set is', ['a', 'b', 'c'], ['a', 'b'], false],
    ['set is', ['a', 'a'], ['a'], true],
    ['set is', ['(none)'], ['a'], false],
    ['set is not', ['a'], ['a', 'b'], true],
    ['set is not', ['a', 'b', 'c'], ['a', 'b'], true],
    ['set is not', ['b', 'a'], ['a', 'b'], false],
  ] as const)('%s %j against %j → %s', (op, values, wanted, expected) => {
    expect(matches([...values], op, [...wanted])).toBe(expected);
  });

  it('filters and groups on event and at-event-time user properties', () => {
    const oracle = createOracle([
      event('$identify', MONDAY, { user_id: 'a', user_properties: { $set: { plan: 'pro' } } }),
      event('Buy', MONDAY + 1, { user_id: 'a', event_properties: { count: 5 } }),
      event('$identify', MONDAY + 2, { user_id: 'a', user_properties: { $set: { plan: 'team' }, $add: { n: 2 } } }),
      event('Buy', MONDAY + 3, { user_id: 'a', event_properties: { count: '7' } }),
      event('Buy', MONDAY + 4, { user_id: 'b', event_properties: { count: 1 } }),
    ]);
    const answer = segmentation(oracle, {
      start: '20260302', end: '20260302', m: 'totals',
      e: { event_type: 'Buy', filters: [{ subprop_type: 'event', subprop_key: 'count', subprop_op: 'greater', subprop_value: ['2'] }], group_by: [{ type: 'user', value: 'gp:plan' }] },
    });
    expect(answer.seriesLabels).toEqual([[0, 'pro'], [0, 'team']]);
    expect(answer.series).toEqual([[1], [1]]);
    expect(answer.seriesCollapsed).toEqual([[{ setId: '', value: 1 }], [{ setId: '', value: 1 }]]);
  });
});

describe('segmentation metrics', () => {
  const oracle = createOracle([
    event('A', MONDAY, { user_id: 'a', event_properties: { price: 2 } }),
    event('A', MONDAY + 1, { user_id: 'a', event_properties: { price: 'x' } }),
    event('B', MONDAY + 2, { user_id: 'b' }),
    event('$identify', MONDAY + 3, { user_id: 'c' }),
    event('A', MONDAY + DAY, { user_id: 'a', event_properties: { price: 4 } }),
    event('A', MONDAY + DAY, { user_id: 'b', event_properties: { price: 6 } }),
  ]);
  const day12 = { start: '20260302', end: '20260303', e: { event_type: 'A' } };
  it('pct_dau divides by the active users of the bucket (inactive events do not count)', () => {
    expect(segmentation(oracle, { ...day12, m: 'pct_dau' }).series).toEqual([[0.5, 1]]);
  });
  it('average, sums and value_avg', () => {
    expect(segmentation(oracle, { ...day12, m: 'average' }).series).toEqual([[2, 1]]);
    const byPrice = { ...day12, e: { event_type: 'A', group_by: [{ type: 'event' as const, value: 'price' }] } };
    // The first group-by is the measured property: one series per event.
    expect(segmentation(oracle, { ...byPrice, m: 'sums' }).seriesCollapsed.map((c) => c[0]!.value)).toEqual([12]);
  });
  it('rolling windows count a user once over the window; rolling average means the points', () => {
    expect(segmentation(oracle, { ...day12, rollingWindow: 2 }).series).toEqual([[1, 2]]);
    expect(segmentation(oracle, { start: '20260303', end: '20260303', e: { event_type: 'A' }, rollingWindow: 2 }).series).toEqual([[2]]);
    expect(segmentation(oracle, { start: '20260303', end: '20260303', e: { event_type: 'A' }, rollingAverage: 2 }).series).toEqual([[1.5]]);
    expect(segmentation(oracle, { start: '20260303', end: '20260303', e: { event_type: '_active' } }).series).toEqual([[2]]);
  });
});

describe('funnels', () => {
  const steps = [{ event_type: 'A' }, { event_type: 'B' }, { event_type: 'C' }];
  const range = { start: '20260302', end: '20260308', e: steps };
  const oracle = createOracle([
    // interleaved: A X B C
    event('A', MONDAY, { user_id: 'x' }), event('X', MONDAY + 1, { user_id: 'x' }),
    event('B', MONDAY + 2, { user_id: 'x' }), event('C', MONDAY + 3, { user_id: 'x' }),
    // out of order: A C B
    event('A', MONDAY, { user_id: 'o' }), event('C', MONDAY + 10, { user_id: 'o' }), event('B', MONDAY + 20, { user_id: 'o' }),
    // same millisecond, sent in reverse: C B A at one time
    event('C', MONDAY + 5, { user_id: 's' }), event('B', MONDAY + 5, { user_id: 's' }), event('A', MONDAY + 5, { user_id: 's' }),
  ]);
  it('ordered, sequential and unordered reach different steps', () => {
    expect(funnels(oracle, { ...range, mode: 'ordered' })[0]!.cumulativeRaw).toEqual([3, 3, 2]);
    expect(funnels(oracle, { ...range, mode: 'sequential' })[0]!.cumulativeRaw).toEqual([3, 1, 1]);
    expect(funnels(oracle, { ...range, mode: 'unordered' })[0]!.cumulativeRaw).toEqual([3, 3, 3]);
  });
  it('derived ratios and times in ms, index 0 the whole funnel', () => {
    const [element] = funnels(oracle, { ...range, mode: 'ordered' });
    expect(element!.cumulative).toEqual([1, 1, 2 / 3]);
    expect(element!.stepByStep).toEqual([1, 1, 2 / 3]);
    expect(element!.medianTransTimes).toEqual([2, 2, 1]); // whole: x 3, s 0 → (0+3)/2 rounded
    expect(element!.avgTransTimes).toEqual([2, 7, 1]); // A→B: x 2, o 20, s 0
  });
  it('the entry reaching the furthest step wins, the earliest among equals', () => {
    const twoEntries = createOracle([
      event('A', MONDAY, { user_id: 'u' }),
      event('A', MONDAY + DAY, { user_id: 'u' }),
      event('B', MONDAY + DAY + 1000, { user_id: 'u' }),
      event('C', MONDAY + DAY + 2000, { user_id: 'u' }),
    ]);
    const wide = funnels(twoEntries, range)[0]!;
    // The user counts on both entry days, each with that day's best path.
    expect(wide.dayFunnels.series.slice(0, 2)).toEqual([[1, 1, 1], [1, 1, 1]]);
    const narrow = funnels(twoEntries, { ...range, cs: 3600 })[0]!;
    expect(narrow.dayFunnels.series.slice(0, 2)).toEqual([[1, 0, 0], [1, 1, 1]]);
    expect(narrow.medianTransTimes).toEqual([2000, 1000, 1000]);
  });
  it('one element per group value at the entry', () => {
    const grouped = funnels(createOracle([
      event('A', MONDAY, { user_id: 'a', country: 'Japan' }),
      event('A', MONDAY, { user_id: 'b', country: 'Japan' }),
      event('A', MONDAY, { user_id: 'c' }),
    ]), { ...range, g: 'country' });
    expect(grouped.map((el) => [el.groupValue, el.cumulativeRaw])).toEqual([['Japan', [2, 0, 0]], ['(none)', [1, 0, 0]]]);
  });
});

describe('sessions, composition, events list', () => {
  const oracle = createOracle([
    event('A', MONDAY + 1000, { user_id: 'a', session_id: MONDAY }),
    event('B', MONDAY + 61_000, { user_id: 'a', session_id: MONDAY, country: 'Japan' }),
    event('A', MONDAY + 5000, { user_id: 'b', session_id: -1, country: 'Brazil' }),
    event('A', MONDAY + 7000, { user_id: 'b', country: 'Germany' }),
    event('$identify', MONDAY + 2 * HOUR, { user_id: 'c', session_id: MONDAY + HOUR }),
    event('A', MONDAY + DAY + 4000, { user_id: 'b', session_id: MONDAY + DAY }),
  ]);
  const twoDays = { start: '20260302', end: '20260303' };
  it('sessions ignore −1, missing ids and sessions without an active event', () => {
    expect(sessionLength(oracle, twoDays)).toEqual({
      series: [[0, 1, 0, 0, 1, 0, 0, 0, 0]],
      xValues: ['0s-3s', '3s-10s', '10s-30s', '30s-60s', '60s-180s', '180s-600s', '600s-1800s', '1800s-3600s', '3600s-86400s'],
    });
    expect(sessionLength(oracle, { ...twoDays, timeHistogramConfigBinMin: 0, timeHistogramConfigBinMax: 2, timeHistogramConfigBinSize: 1, timeHistogramConfigBinTimeUnit: 'minutes' }).series).toEqual([[1, 1]]);
    expect(sessionAverage(oracle, twoDays).series).toEqual([[61, 4]]);
    expect(sessionsPerUser(oracle, twoDays).series).toEqual([[0.5, 1]]);
  });
  it('session-length bins are [start, end): a session as long as the last bin ends is in none, unless it reaches the one-day cap', () => {
    const session = (user: string, start: number, lengthMs: number) => [start, start + lengthMs].map((time) => event('A', time, { user_id: user, session_id: start }));
    const edges = createOracle([...session('a', MONDAY + HOUR, 60_000), ...session('b', MONDAY + 2 * HOUR, 120_000), ...session('c', MONDAY, 25 * HOUR)]);
    const monday = { start: '20260302', end: '20260302' };
    expect(sessionLength(edges, { ...monday, timeHistogramConfigBinMin: 0, timeHistogramConfigBinMax: 2, timeHistogramConfigBinSize: 1, timeHistogramConfigBinTimeUnit: 'minutes' }).series).toEqual([[0, 1]]);
    expect(sessionLength(edges, monday).series).toEqual([[0, 0, 0, 0, 2, 0, 0, 0, 1]]);
  });
  it('composition takes the latest active event in range', () => {
    expect(composition(oracle, { start: '20260302', end: '20260302', p: 'country' }))
      .toEqual({ series: [[1, 1]], seriesLabels: ['country'], xValues: ['Germany', 'Japan'] });
  });
  it('events list totals count the current week up to now', () => {
    const list = eventsList(oracle, MONDAY + DAY + 3000);
    expect(list.map((e) => [e.value, e.totals, e.non_active])).toEqual([['A', 3, false], ['B', 1, false], ['$identify', 1, true]]);
  });
});

describe('dataset', () => {
  it('is deterministic, batched ≤ 2000 and covers the cases the oracle must handle', () => {
    const small = { users: 300 };
    const events = generateEvents(small);
    expect(generateEvents(small)).toEqual(events);
    for (const batch of generateBatches(small)) expect(batch.length).toBeLessThanOrEqual(2000);
    const types = new Set(events.map((e) => e.event_type));
    for (const type of ['$identify', '[Experiment] Assignment', 'A', 'B', 'C', 'Purchase']) expect(types).toContain(type);
    expect(events.some((e) => e.session_id === -1)).toBe(true);
    expect(events.some((e) => e.user_id === undefined)).toBe(true);
    const oracle = createOracle(events);
    expect(new Set(oracle.events.map((r) => r.svcId)).size).toBeLessThan(new Set(events.map((e) => e.device_id)).size);
  });
});

describe('formulas', () => {
  it('evaluates functions over A and B with operator precedence and parentheses', () => {
    const oracle = createOracle([
      event('A', MONDAY, { user_id: 'a', event_properties: { n: 3 } }),
      event('A', MONDAY + 1, { user_id: 'a', event_properties: { n: 5 } }),
      event('B', MONDAY + 2, { user_id: 'b' }),
      event('B', MONDAY + 3, { user_id: 'c' }),
    ]);
    const answer = segmentation(oracle, {
      start: '20260302', end: '20260302', m: 'formula', formula: '(TOTALS(A) + UNIQUES(B)) * 2 / UNIQUES(B) - PROPMAX(A)',
      e: { event_type: 'A', group_by: [{ type: 'event', value: 'n' }] }, e2: { event_type: 'B' },
    });
    expect(answer.series).toEqual([[-1]]); // (2 + 2) * 2 / 2 - 5
    expect(answer.seriesMeta).toEqual([{ segmentIndex: 0, formulaIndex: 0, formula: '(TOTALS(A) + UNIQUES(B)) * 2 / UNIQUES(B) - PROPMAX(A)' }]);
  });
});
