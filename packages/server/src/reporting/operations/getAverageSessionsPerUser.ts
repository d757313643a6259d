// getAverageSessionsPerUser (`GET /api/2/sessions/peruser`,
// specs/reporting/operations/getAverageSessionsPerUser.yaml): sessions per active user per day.
import type { ReportingOperation } from './operation.js';
import { dailySessionsCost, dailySessionsParameters, type DailySessionsQuery, dailySessionsReply } from './daily-sessions.js';

export const getAverageSessionsPerUser: ReportingOperation<'getAverageSessionsPerUser', DailySessionsQuery> = {
  parameters: dailySessionsParameters,
  cost: dailySessionsCost,
  answer: (ctx, query) => dailySessionsReply(ctx, query, 'perUser'),
};
