// Parameters several reporting operations share, read from the spec's shapes into the query
// model (model/query.ts, model/time.ts): ranges, event specifications, segments, costs.
import type { components } from '../../generated/reporting.js';
import type { EventTypeNames } from '../../model/event-type-names.js';
import { type Condition, type EventSelector, type PropertyRef, type Segment, userProperty } from '../../model/query.js';
import { type Interval, parseReportDate, type ReportRange, reportRange } from '../../model/time.js';
import { BadReportRequest } from './operation.js';

type Schemas = components['schemas'];
export type EventSpecification = Schemas['EventSpecification'];

export const EVENT_TYPE_COST = 1;
export const GROUP_BY_COST = 4;

/** Longest range per interval, in days (the specs' descriptions). */
const MAX_DAYS: Record<Interval, number> = { minute5: 2, hour: 7, day: 365, week: 1096, month: 1096 };

/** The range from `start` to `end` (`YYYYMMDD`) in the project's zone, checked against the interval's longest. */
export function range(timeZone: string, start: string, end: string, interval: Interval): ReportRange {
  for (const date of [start, end]) {
    const { year, month, day } = parseReportDate(date);
    const parsed = new Date(Date.UTC(year, month - 1, day));
    if (parsed.getUTCMonth() !== month - 1 || parsed.getUTCDate() !== day) throw new BadReportRequest(`${date} is not a date (YYYYMMDD)`);
  }
  const result = reportRange(timeZone, start, end);
  if (result.days < 1) throw new BadReportRequest(`end (${end}) is before start (${start})`);
  if (result.days > MAX_DAYS[interval]) throw new BadReportRequest(`The range has ${result.days} days; at most ${MAX_DAYS[interval]} for this interval`);
  return result;
}

/** Calendar days from `start` to `end` (`YYYYMMDD`), for the cost (the range is checked later). */
export function days(start: string, end: string): number {
  const at = (text: string) => {
    const { year, month, day } = parseReportDate(text);
    return Date.UTC(year, month - 1, day);
  };
  return Math.max(1, (at(end) - at(start)) / 86_400_000 + 1);
}

/** The selector of an event specification; an event type renamed in the tracking plan selects the events of its ingested name. */
export function selector(spec: EventSpecification, names: EventTypeNames): EventSelector {
  return {
    eventType: names.ingestedNames.get(spec.event_type) ?? spec.event_type,
    conditions: (spec.filters ?? []).map((filter) => ({
      property: filter.subprop_type === 'event' ? { kind: 'event', name: filter.subprop_key } : userProperty(filter.subprop_key),
      op: filter.subprop_op,
      values: filter.subprop_value.map(String),
    })),
  };
}

export const groupBys = (spec: EventSpecification): PropertyRef[] => (spec.group_by ?? []).map((g) => (g.type === 'event' ? { kind: 'event', name: g.value } : userProperty(g.value)));

export function segmentOf(conditions: Schemas['SegmentCondition'][] | undefined): Segment {
  return (conditions ?? []).map((c): Segment[number] => {
    if (c.prop === 'userdata_cohort') return { cohortId: c.values[0]!, member: c.op !== 'is not' };
    return { property: userProperty(c.prop), op: c.op, values: c.values } satisfies Condition;
  });
}
