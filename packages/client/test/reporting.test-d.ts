import { describe, expectTypeOf, it } from 'vitest';
import {
  createAppClient,
  type EventFilter,
  type EventSegmentation,
  type EventSpecification,
  type FunnelSeries,
  type SegmentDefinition,
  type UserCounts,
} from '../src/index.js';

const app = createAppClient({ apiKey: 'k', secretKey: 's' });
const range = { start: '20261101', end: '20261107' };
const played: EventSpecification = { event_type: 'Song Played', group_by: [{ type: 'user', value: 'gp:plan' }] };

describe('event segmentation', () => {
  it('takes e, e2 and s as objects and types the answer', async () => {
    const segment: SegmentDefinition = [{ prop: 'userdata_cohort', op: 'is', values: ['a1b2c3d'] }];
    const { data } = await app.GET('/api/2/events/segmentation', {
      params: { query: { ...range, e: played, e2: { event_type: '_active' }, s: segment, m: 'uniques', i: -300000, n: 'active' } },
    });
    expectTypeOf(data?.data).toEqualTypeOf<EventSegmentation | undefined>();
    expectTypeOf(data?.data.seriesCollapsed[0]?.[0]?.value).toEqualTypeOf<number | undefined>();
  });

  it('rejects JSON strings, unknown enum values and missing required parameters', () => {
    // @ts-expect-error e is an event specification object; the client serializes it
    void app.GET('/api/2/events/segmentation', { params: { query: { ...range, e: '{"event_type":"Song Played"}' } } });
    // @ts-expect-error s is an array of conditions, not JSON text
    void app.GET('/api/2/events/segmentation', { params: { query: { ...range, e: played, s: '[{"prop":"country"}]' } } });
    // @ts-expect-error m is not a metric of event segmentation
    void app.GET('/api/2/events/segmentation', { params: { query: { ...range, e: played, m: 'medians' } } });
    // @ts-expect-error i is one of -300000, -3600000, 1, 7, 30
    void app.GET('/api/2/events/segmentation', { params: { query: { ...range, e: played, i: 2 } } });
    // @ts-expect-error e is required
    void app.GET('/api/2/events/segmentation', { params: { query: { ...range } } });
    // @ts-expect-error start is required
    void app.GET('/api/2/events/segmentation', { params: { query: { end: '20261107', e: played } } });
  });

  it('checks the inside of event specifications', () => {
    // @ts-expect-error event_type is required
    const noType: EventSpecification = { filters: [] };
    // @ts-expect-error subprop_op is required
    const noOperator: EventFilter = { subprop_type: 'event', subprop_key: 'genre', subprop_value: ['jazz'] };
    // @ts-expect-error 'equals' is not an operator
    const badOperator: EventFilter = { subprop_type: 'event', subprop_key: 'genre', subprop_op: 'equals', subprop_value: ['jazz'] };
    // @ts-expect-error a group-by is by an event or a user property
    const badGroupBy: EventSpecification = { event_type: 'x', group_by: [{ type: 'cohort', value: 'a' }] };
    // @ts-expect-error unknown key
    const extraKey: EventSpecification = { event_type: 'x', where: [] };
    void [noType, noOperator, badOperator, badGroupBy, extraKey];
  });
});

describe('funnels', () => {
  it('take the steps as an array of event specifications', async () => {
    const { data } = await app.GET('/api/2/funnels', {
      params: { query: { ...range, e: [{ event_type: 'Product Viewed' }, played], mode: 'unordered', cs: 3, limit: 100 } },
    });
    expectTypeOf(data?.data).toEqualTypeOf<FunnelSeries[] | undefined>();
    // @ts-expect-error the steps are an array, even for one step
    void app.GET('/api/2/funnels', { params: { query: { ...range, e: played } } });
    // @ts-expect-error steps are objects, not JSON text
    void app.GET('/api/2/funnels', { params: { query: { ...range, e: ['{"event_type":"A"}'] } } });
    // @ts-expect-error mode is ordered, unordered or sequential
    void app.GET('/api/2/funnels', { params: { query: { ...range, e: [played], mode: 'any' } } });
  });
});

describe('the other reporting operations', () => {
  it('type parameters and answers', async () => {
    const users = await app.GET('/api/2/users', { params: { query: { ...range, m: 'new', i: 7, g: 'country' } } });
    expectTypeOf(users.data?.data).toEqualTypeOf<UserCounts | undefined>();
    // @ts-expect-error m of /api/2/users is new or active
    void app.GET('/api/2/users', { params: { query: { ...range, m: 'uniques' } } });
    // @ts-expect-error /api/2/users has no real-time interval
    void app.GET('/api/2/users', { params: { query: { ...range, i: -300000 } } });
    // @ts-expect-error the bin unit is hours, minutes or seconds
    void app.GET('/api/2/sessions/length', { params: { query: { ...range, timeHistogramConfigBinTimeUnit: 'days' } } });
    // @ts-expect-error p is required
    void app.GET('/api/2/composition', { params: { query: { ...range } } });
    const events = await app.GET('/api/2/events/list');
    expectTypeOf(events.data?.data[0]?.non_active).toEqualTypeOf<boolean | undefined>();
  });

  it('types the chart export as the CSV text inside data', async () => {
    const { data } = await app.GET('/api/3/chart/{chart_id}/csv', { params: { path: { chart_id: 'f3kq9zt' } } });
    expectTypeOf(data).toEqualTypeOf<{ data: string } | undefined>();
    // @ts-expect-error chart_id is required
    void app.GET('/api/3/chart/{chart_id}/csv', { params: { path: {} } });
  });

  it('types the revenue LTV (beyond the documents)', async () => {
    const ltv = await app.GET('/api/2/revenue/ltv', { params: { query: { start: '20261101', end: '20261107', m: 1, i: 7 } } });
    type Cohort = NonNullable<typeof ltv.data>['data']['series'][number]['values'][string];
    expectTypeOf<Cohort['r7d']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<Cohort['count']>().toEqualTypeOf<number>();
    // @ts-expect-error m is a metric number (0 to 3), not a name
    void app.GET('/api/2/revenue/ltv', { params: { query: { start: '20261101', end: '20261107', m: 'arpu' } } });
    // @ts-expect-error end is required
    void app.GET('/api/2/revenue/ltv', { params: { query: { start: '20261101' } } });
  });

  it('types the real-time active users and a saved chart\'s results (beyond the documents)', async () => {
    const realtime = await app.GET('/api/2/realtime', { params: { query: { i: 5 } } });
    expectTypeOf(realtime.data?.data.series).toEqualTypeOf<number[][] | undefined>();
    // @ts-expect-error the real-time interval is five minutes only
    void app.GET('/api/2/realtime', { params: { query: { i: 1 } } });
    const results = await app.GET('/api/3/chart/{chart_id}/query', { params: { path: { chart_id: 'f3kq9zt' } } });
    type ChartData = NonNullable<typeof results.data>['data'];
    expectTypeOf<UserCounts>().toExtend<ChartData>();
    expectTypeOf<FunnelSeries[]>().toExtend<ChartData>();
  });

  it('types user search and user activity, whose answers are not wrapped in data', async () => {
    const search = await app.GET('/api/2/usersearch', { params: { query: { user: 'user-2841' } } });
    expectTypeOf(search.data?.matches[0]?.svc_id).toEqualTypeOf<number | undefined>();
    const activity = await app.GET('/api/2/useractivity', { params: { query: { user: 10000000000042, limit: 100, direction: 'earliest' } } });
    expectTypeOf(activity.data?.userData.canonical_svc_id).toEqualTypeOf<number | undefined>();
    // @ts-expect-error user is an svc_id, a number
    void app.GET('/api/2/useractivity', { params: { query: { user: 'user-2841' } } });
    // @ts-expect-error direction is latest or earliest
    void app.GET('/api/2/useractivity', { params: { query: { user: 1, direction: 'oldest' } } });
  });

  it('rejects paths the reporting interface does not describe', () => {
    // @ts-expect-error retention is not described
    void app.GET('/api/2/retention', { params: { query: range } });
    // @ts-expect-error reporting is read-only
    void app.POST('/api/2/events/segmentation', { params: { query: { ...range, e: played } } });
  });
});
