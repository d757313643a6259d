// `/api/2/composition`: active users of the range by the value of a property on their
// latest active event in the range, most users first.
import { NONE, type PropertyRef } from '../../model/query.js';
import type { ReportRange } from '../../model/time.js';
import type { RunnerContext } from './context.js';

export async function composition(ctx: RunnerContext, range: ReportRange, property: PropertyRef): Promise<{ values: string[]; counts: number[] }> {
  const scan = ctx.dialect.scan({ appId: ctx.appId, timeZone: ctx.timeZone, range, segment: [], properties: [property] });
  const rows = await ctx.query(
    `SELECT value, count(*) AS users FROM (SELECT svc_id, ${ctx.dialect.valueAtMax(`coalesce(p0, ${ctx.dialect.string(NONE)})`, ctx.dialect.timeOrderKey('time', 'ingest_seq'))} AS value FROM (${scan}) WHERE active GROUP BY svc_id)
     GROUP BY value ORDER BY users DESC, value`,
  );
  return { values: rows.map((r) => r.value as string), counts: rows.map((r) => r.users as number) };
}
