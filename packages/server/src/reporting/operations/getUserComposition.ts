// getUserComposition (`GET /api/2/composition`, specs/reporting/operations/getUserComposition.yaml):
// active users by the value of a user property (runners/composition.ts).
import { userProperty } from '../../model/query.js';
import { queryCost } from '../../shared/reporting-limits.js';
import { composition } from '../runners/composition.js';
import type { ReportingOperation } from './operation.js';
import { days, EVENT_TYPE_COST, range } from './parameters.js';

type Query = { start: string; end: string; p: string };

export const getUserComposition: ReportingOperation<'getUserComposition', Query> = {
  parameters: (request) => request.query as Query,

  cost: ({ start, end }) => queryCost(days(start, end), 1, EVENT_TYPE_COST),

  answer: async (ctx, { start, end, p }) => {
    const { values, counts } = await composition(ctx, range(ctx.timeZone, start, end, 'day'), userProperty(p));
    return { status: 200, body: { data: { series: [counts], seriesLabels: [p], xValues: values } } };
  },
};
