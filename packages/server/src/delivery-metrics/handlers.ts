// Handler of the delivery-metrics group: the summary of a sync's delivery attempts over a
// window, within the project's limits (429), for syncs of the caller's project only (403).
import type { HandlerRequest, Reply } from '../http/operations.js';
import type { Destination } from './streamer.js';
import type { MetricsLimits } from './limits.js';
import { requestWindow, summarize } from './metrics.js';
import type { StreamStore } from './store.js';

export class DeliveryMetricsHandlers {
  constructor(
    private readonly store: StreamStore,
    private readonly limits: MetricsLimits,
    private readonly destinationOf: (syncId: string) => Destination | undefined,
  ) {}

  getDeliveryMetricsSummary = async (request: HandlerRequest<'getDeliveryMetricsSummary'>): Promise<Reply<'getDeliveryMetricsSummary'>> => {
    const project = request.caller.project!;
    const admission = this.limits.admit(project.app_id, request.receivedAt);
    if (!('release' in admission)) {
      const { concurrentRequests, requestsPerMinute } = this.limits.figures;
      const error = `Rate limit exceeded: at most ${requestsPerMinute} requests per minute and ${concurrentRequests} concurrent requests per project`;
      return { status: 429, body: { code: 429, error }, headers: { 'retry-after': String(admission.retryAfterSeconds) } };
    }
    try {
      const { sync_id: syncId, time_period: timePeriod } = request.query;
      if (this.destinationOf(syncId!)?.app_id !== project.app_id) {
        return { status: 403, body: { code: 403, error: `Sync ${syncId} does not belong to the organization and project of these credentials` } };
      }
      const window = requestWindow(request.query, request.receivedAt);
      if ('status' in window) return { status: window.status, body: { code: window.status, error: window.error } };
      const settled = await this.store.settled(syncId!, { start: window.start, end: Math.min(window.end, request.receivedAt) });
      return { status: 200, body: summarize(timePeriod!, window, settled) };
    } finally {
      admission.release();
    }
  };
}
