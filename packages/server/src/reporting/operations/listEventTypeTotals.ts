// listEventTypeTotals (`GET /api/2/events/list`, specs/reporting/operations/listEventTypeTotals.yaml):
// every event type with its events of the current week (runners/event-types.ts) and what the
// tracking plan says of it.
import { eventTypeTotals } from '../runners/event-types.js';
import type { ReportingOperation } from './operation.js';
import { EVENT_TYPE_COST } from './parameters.js';

export const listEventTypeTotals: ReportingOperation<'listEventTypeTotals', undefined> = {
  parameters: () => undefined,

  cost: () => EVENT_TYPE_COST,

  answer: async (ctx, _, env) => {
    const [types, names] = await Promise.all([eventTypeTotals(ctx), env.eventTypeNames(ctx.appId)]);
    const data = types.map((t) => {
      const plan = names.flags.get(t.eventType);
      return { value: t.eventType, display: plan?.display ?? t.eventType, totals: t.totals, non_active: t.nonActive, deleted: plan?.deleted ?? false, hidden: plan?.hidden ?? false, flow_hidden: plan?.flowHidden ?? false };
    });
    return { status: 200, body: { data } };
  },
};
