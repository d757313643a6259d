// getChartResults (`GET /api/3/chart/{chart_id}/query`, specs/reporting/operations/getChartResults.yaml):
// a saved chart's results as JSON, exactly as the chart's operation answers its saved query.
import type { HandlerRequest, Reply } from '../../http/operations.js';
import { type ChartEnv, savedChartAnswer } from './saved-chart.js';

export async function getChartResults(request: HandlerRequest<'getChartResults'>, env: ChartEnv): Promise<Reply<'getChartResults'>> {
  const answer = await savedChartAnswer(request, env, {});
  if ('reply' in answer) return answer.reply as Reply<'getChartResults'>;
  return { status: 200, body: answer.body } as Reply<'getChartResults'>;
}
