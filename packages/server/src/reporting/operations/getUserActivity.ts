// getUserActivity (`GET /api/2/useractivity`, specs/reporting/operations/getUserActivity.yaml):
// one user's data and a page of their events, written as Export API lines (runners/user-lookup.ts)
// with the user's state at each (runners/user-state.ts).
import type { components } from '../../generated/reporting.js';
import type { HandlerRequest } from '../../http/operations.js';
import { localDateLabel } from '../../model/time.js';
import { exportLine } from '../../store/export-lines.js';
import { deviceIds, eventsOf, otherSvcIds, profileOf, summaries, userOfSvcId } from '../runners/user-lookup.js';
import { withUserState } from '../runners/user-state.js';
import { USER_LOOKUP_COST } from './getUserSearch.js';
import type { ReportingOperation } from './operation.js';

type Query = HandlerRequest<'getUserActivity'>['query'];
type ExportedEvent = components['schemas']['ExportedEvent'];

interface Parameters {
  svcId: number;
  offset: number;
  limit: number;
  latestFirst: boolean;
}

const text = (value: unknown) => (value === null || value === undefined ? null : String(value));

export const getUserActivity: ReportingOperation<'getUserActivity', Parameters> = {
  // The spec has checked the bounds: `user` a whole number below 2^53, `offset` and `limit` in range.
  parameters: (request) => {
    const query = request.query as Query;
    return { svcId: query.user!, offset: query.offset ?? 0, limit: query.limit ?? 1000, latestFirst: query.direction !== 'earliest' };
  },

  cost: () => USER_LOOKUP_COST,

  answer: async (ctx, { svcId, offset, limit, latestFirst }) => {
    const user = await userOfSvcId(ctx, svcId);
    const [summary] = user ? await summaries(ctx, [user]) : [];
    if (!user || !summary) return { status: 404, body: { code: 404, error: `No user with svc_id ${svcId} in this project` } };
    const [devices, others, properties, events] = await Promise.all([deviceIds(ctx, user), otherSvcIds(ctx, user), profileOf(ctx, user), eventsOf(ctx, user, { offset, limit, latestFirst }).then((rows) => withUserState(ctx, user.members, rows))]);
    const latest = summary.latest;
    return {
      status: 200,
      body: {
        userData: {
          canonical_svc_id: user.svcId,
          merged_svc_ids: others,
          user_id: summary.userId,
          device_ids: devices,
          last_device_id: text(latest.device_id),
          num_events: summary.events,
          num_sessions: summary.sessions,
          first_used: localDateLabel(ctx.timeZone, summary.firstMs),
          last_used: localDateLabel(ctx.timeZone, summary.lastMs),
          purchases: summary.purchases,
          revenue: summary.revenue,
          country: text(latest.country),
          city: text(latest.city),
          region: text(latest.region),
          platform: text(latest.platform),
          language: text(latest.language),
          user_properties: properties,
        },
        // Each line as the Export API writes it, parsed back: one writer of the event format.
        events: events.map((row) => JSON.parse(exportLine(row)) as ExportedEvent),
      },
    };
  },
};
