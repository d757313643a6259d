// getAverageSessionLength (`GET /api/2/sessions/average`,
// specs/reporting/operations/getAverageSessionLength.yaml): average session length per day, seconds.
import type { ReportingOperation } from './operation.js';
import { dailySessionsCost, dailySessionsParameters, type DailySessionsQuery, dailySessionsReply } from './daily-sessions.js';

export const getAverageSessionLength: ReportingOperation<'getAverageSessionLength', DailySessionsQuery> = {
  parameters: dailySessionsParameters,
  cost: dailySessionsCost,
  answer: (ctx, query) => dailySessionsReply(ctx, query, 'averageLength'),
};
