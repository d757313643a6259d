// getSessionLengthDistribution (`GET /api/2/sessions/length`,
// specs/reporting/operations/getSessionLengthDistribution.yaml): sessions per length bin over
// the range, the documented bins or custom ones (runners/sessions.ts).
import type { HandlerRequest } from '../../http/operations.js';
import { queryCost } from '../../shared/reporting-limits.js';
import { DEFAULT_BINS_MS, MAX_SESSION_MS, sessionLengths } from '../runners/sessions.js';
import { BadReportRequest, type ReportingOperation } from './operation.js';
import { days, EVENT_TYPE_COST, range } from './parameters.js';

type Query = HandlerRequest<'getSessionLengthDistribution'>['query'] & { start: string; end: string };

/** Custom session-length bins per answer, at most. */
const MAX_CUSTOM_BINS = 100;

export const getSessionLengthDistribution: ReportingOperation<'getSessionLengthDistribution', Query> = {
  parameters: (request) => request.query as Query,

  cost: (query) => queryCost(days(query.start, query.end), 0, EVENT_TYPE_COST),

  answer: async (ctx, query) => {
    const { xValues, counts } = await sessionLengths(ctx, range(ctx.timeZone, query.start, query.end, 'day'), binEdges(query));
    return { status: 200, body: { data: { series: [counts], xValues } } };
  },
};

/** Bin edges (ms) of the session-length histogram: custom ones when min, max and unit are valid, else the defaults. */
function binEdges(q: { timeHistogramConfigBinTimeUnit?: string; timeHistogramConfigBinMin?: number; timeHistogramConfigBinMax?: number; timeHistogramConfigBinSize?: number }): number[] {
  const unit = { seconds: 1000, minutes: 60_000, hours: 3_600_000 }[q.timeHistogramConfigBinTimeUnit ?? ''];
  const { timeHistogramConfigBinMin: min, timeHistogramConfigBinMax: max, timeHistogramConfigBinSize: size } = q;
  if (unit === undefined || min === undefined || max === undefined || !(min >= 0) || !(max > min) || max * unit > MAX_SESSION_MS || (size !== undefined && !(size > 0))) return DEFAULT_BINS_MS;
  const step = size ?? (max - min) / 10;
  const bins = Math.ceil((max - min) / step);
  if (!(step > 0) || !(bins <= MAX_CUSTOM_BINS)) throw new BadReportRequest(`The custom bins from ${min} to ${max} by ${step} are ${bins} bins; at most ${MAX_CUSTOM_BINS}`);
  return [...Array.from({ length: bins }, (_, i) => (min + i * step) * unit), max * unit];
}
