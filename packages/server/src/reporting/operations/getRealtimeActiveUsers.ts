// getRealtimeActiveUsers (`GET /api/2/realtime`, specs/reporting/operations/getRealtimeActiveUsers.yaml):
// active users per five minutes of today and yesterday (runners/realtime.ts) in the platform's shape.
import { queryCost } from '../../shared/reporting-limits.js';
import { realtimeActiveUsers } from '../runners/realtime.js';
import type { ReportingOperation } from './operation.js';

/** Today and yesterday. */
const REALTIME_DAYS = 2;

export const getRealtimeActiveUsers: ReportingOperation<'getRealtimeActiveUsers', null> = {
  // `i` takes one value (5), which the spec has checked: nothing to read.
  parameters: () => null,

  // The documented model: days × conditions (none: 1) × 1 for an operation the documentation gives no cost.
  cost: () => queryCost(REALTIME_DAYS, 0, 1),

  answer: async (ctx) => {
    const { times, today, yesterday } = await realtimeActiveUsers(ctx);
    return { status: 200, body: { data: { xValues: times, seriesLabels: ['Today', 'Yesterday'], series: [today, yesterday] } } };
  },
};
