// The small query model the reporting runners build and a dialect prints as SQL: a scan of
// one project's events in a range, which events it keeps, and the per-event values it
// exposes (bucket, properties at event time). Runners aggregate over the printed scan.
import type { Interval, ReportRange } from './time.js';

export const FILTER_OPERATORS = ['is', 'is not', 'contains', 'does not contain', 'less', 'less or equal', 'greater', 'greater or equal', 'set is', 'set is not'] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

/** Built-in user properties (SEMANTICS.md, "Properties at event time"). */
export const BUILT_IN_USER_PROPERTIES = ['version', 'country', 'city', 'region', 'DMA', 'language', 'platform', 'os', 'device', 'device_type', 'start_version', 'paying'] as const;
export type BuiltInUserProperty = (typeof BUILT_IN_USER_PROPERTIES)[number];

/** A property an event has at its time: an event property, a custom (`gp:`) or a built-in user property. */
export type PropertyRef = { kind: 'event'; name: string } | { kind: 'custom'; name: string } | { kind: 'builtIn'; name: BuiltInUserProperty };

export interface Condition {
  property: PropertyRef;
  op: FilterOperator;
  values: string[];
}

/** Membership in a behavioral cohort (`userdata_cohort` segments): the members live in the store's `cohort_members`. */
export interface CohortCondition {
  cohortId: string;
  member: boolean;
}

/** A segment: user property conditions at event time and cohort memberships, all met. */
export type Segment = (Condition | CohortCondition)[];

/** Which events count: an event type (or `_active`, `_all`, `revenue_amount`) and conditions on them. */
export interface EventSelector {
  eventType: string;
  conditions: Condition[];
}

export interface EventScan {
  appId: number;
  timeZone: string;
  range: ReportRange;
  /** Events kept: those of the selector; every event when absent. */
  selector?: EventSelector;
  /** Conditions of the segment (on user properties at event time, and cohort memberships). */
  segment: Segment;
  /** Exposed as columns `p0`, `p1`, ... (text values, null when missing). */
  properties: PropertyRef[];
  /** Exposed as column `bucket` (the label of the event's bucket). */
  interval?: Interval;
  /** Exposed as column `revenue` (the event's stored revenue, null when it has none). */
  revenue?: boolean;
  /** What the range and the buckets apply to: the event's time (default) or its session's start. */
  timeColumn?: 'time' | 'session_id';
  /** Keeps only each user's first event ever (new users). */
  firstEventsOnly?: boolean;
  /** Exposed as boolean columns `f0`, `f1`, ...: whether the event matches each selector (funnel steps). */
  flags?: EventSelector[];
  /** Keeps only the events that match one of `flags`. */
  flaggedOnly?: boolean;
}

/** The event type a selector of one event type names (custom events are written `ce:<name>`). */
export const plainEventType = (eventType: string) => (eventType.startsWith('ce:') ? eventType.slice(3) : eventType);

/** The events that are not "active" (SEMANTICS.md, "Active and new"). */
export const INACTIVE_EVENT_TYPES = ['$identify', '$groupidentify', '[Experiment] Assignment', '[Experiment] Exposure'];

/** Whether an event of type `name` is one of `eventType` (a name, `ce:<name>`, `_all` or `_active`), as the dialects' selectors say. */
export function matchesEventType(eventType: string, name: string | null): boolean {
  if (eventType === '_all') return true;
  // As in SQL, an event without a type is neither active nor of any named type.
  if (name === null) return false;
  return eventType === '_active' ? !INACTIVE_EVENT_TYPES.includes(name) : name === plainEventType(eventType);
}

/** Event and user property names as the API writes them: `gp:` for custom user properties. */
export function userProperty(name: string): PropertyRef {
  if (name.startsWith('gp:')) return { kind: 'custom', name: name.slice(3) };
  if ((BUILT_IN_USER_PROPERTIES as readonly string[]).includes(name)) return { kind: 'builtIn', name: name as BuiltInUserProperty };
  throw new UnknownProperty(name);
}

export class UnknownProperty extends Error {
  constructor(readonly property: string) {
    super(`Unknown user property ${property}: custom user properties are written gp:<name>, built-in ones are ${BUILT_IN_USER_PROPERTIES.join(', ')}`);
  }
}

/** The label of events without a value. */
export const NONE = '(none)';
