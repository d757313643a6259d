// What the segmentation form asks for, as the query of `GET /api/2/events/segmentation`.
import type { AppClientPaths, EventFilter, EventGroupBy, FilterOperator } from '@svc/client';
import { reportDate } from '../dates.js';

export type SegmentationQuery = AppClientPaths['/api/2/events/segmentation']['get']['parameters']['query'];
export type Metric = 'uniques' | 'totals' | 'pct_dau' | 'average';
export type Interval = -3600000 | 1 | 7 | 30;
export type PropertyOwner = 'event' | 'user';

export interface PropertyFilter {
  owner: PropertyOwner;
  name: string;
  operator: FilterOperator;
  /** As typed: several values separated by commas. */
  values: string;
}

export interface SegmentationChoice {
  event: string;
  metric: Metric;
  interval: Interval;
  /** `YYYY-MM-DD`, both included. */
  start: string;
  end: string;
  groupBy?: { owner: PropertyOwner; name: string; limit: number };
  filter?: PropertyFilter;
}

const NUMERIC_OPERATORS: ReadonlySet<FilterOperator> = new Set(['less', 'less or equal', 'greater', 'greater or equal']);

/** The values of a filter: one number for the numeric operators, else the comma-separated texts. */
export function filterValues(operator: FilterOperator, typed: string): (string | number)[] {
  if (NUMERIC_OPERATORS.has(operator)) return [Number(typed.trim())];
  return typed.split(',').map((value) => value.trim()).filter((value) => value !== '');
}

export function propertyFilter(filter: PropertyFilter): EventFilter {
  const condition = { subprop_key: filter.name, subprop_op: filter.operator, subprop_value: filterValues(filter.operator, filter.values) };
  return filter.owner === 'event' ? { subprop_type: 'event', ...condition } : { subprop_type: 'user', ...condition };
}

function groupBy(owner: PropertyOwner, name: string): EventGroupBy {
  return owner === 'event' ? { type: 'event', value: name } : { type: 'user', value: name };
}

export function segmentationQuery(choice: SegmentationChoice): SegmentationQuery {
  const { groupBy: group, filter } = choice;
  return {
    e: {
      event_type: choice.event,
      ...(filter ? { filters: [propertyFilter(filter)] } : {}),
      ...(group ? { group_by: [groupBy(group.owner, group.name)] } : {}),
    },
    m: choice.metric,
    i: choice.interval,
    start: reportDate(choice.start),
    end: reportDate(choice.end),
    ...(group ? { limit: group.limit } : {}),
  };
}
