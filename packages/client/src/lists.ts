// `for await` over the listings of the application host: those answered in one page (cohorts,
// annotations, annotation categories, taxonomy, event type totals), deletion jobs, whose listing
// takes a range of days of at most six months (a longer range is walked window by window), and
// a user's events, read `limit` at a time from an offset.
import type { Annotation, AnnotationCategory } from './annotation-types.js';
import { lenient, type AppClient } from './clients.js';
import type { Cohort } from './cohort-types.js';
import type { DeletionJob } from './deletion.js';
import { listed, listing, offsetListing, oneAnswer, signalInit, type ListOptions, type Listing } from './paging.js';
import type { EventTypeSummary, UserActivityEvent } from './reporting.js';
import type { TaxonomyEventCategory, TaxonomyEventProperty, TaxonomyEventType, TaxonomyUserProperty } from './taxonomy.js';
import type { AppClientPaths } from './types.js';

/** The query parameters of the GET of `Path` on the application host. */
type Query<Path extends keyof AppClientPaths> = AppClientPaths[Path] extends { get: { parameters: { query?: infer Q } } } ? NonNullable<Q> : never;

export type ListCohortsParams = Query<'/api/3/cohorts'>;
export type ListAnnotationsParams = Query<'/api/3/annotations'>;
export type ListAnnotationCategoriesParams = Query<'/api/3/annotation-categories'>;
export type ListEventTypesParams = Query<'/api/2/taxonomy/event'>;
export type ListEventPropertiesParams = Query<'/api/2/taxonomy/event-property'>;
export type ListDeletionJobsParams = Query<'/api/2/deletions/users'>;
/** The user and the order of their events; the iterator moves `offset` itself. */
export type ListUserEventsParams = Omit<Query<'/api/2/useractivity'>, 'offset'>;

const withQuery = <Q>(query: Q, options: ListOptions) => ({ params: { query }, ...signalInit(options) });

/** Every cohort of the project (`includeSyncInfo` adds each cohort's syncs). */
export function listCohorts(client: AppClient, params: ListCohortsParams = {}, options: ListOptions = {}): Listing<Cohort> {
  return listed('listing cohorts', () => lenient(client).GET('/api/3/cohorts', withQuery(params, options)), (data) => data.cohorts);
}

/** Every event category of the tracking plan. */
export function listEventCategories(client: AppClient, options: ListOptions = {}): Listing<TaxonomyEventCategory> {
  return listed('listing event categories', () => lenient(client).GET('/api/2/taxonomy/category', signalInit(options)), (data) => data.data);
}

/**
 * Every annotation, filtered by `category`, `chart_id`, `start` and `end` (the service answers
 * 409, `ConflictError`, when `category` and `chart_id` are both given).
 */
export function listAnnotations(client: AppClient, params: ListAnnotationsParams = {}, options: ListOptions = {}): Listing<Annotation> {
  return listed('listing annotations', () => lenient(client).GET('/api/3/annotations', withQuery(params, options)), (data) => data.data);
}

/** Every user property of the tracking plan. */
export function listUserProperties(client: AppClient, options: ListOptions = {}): Listing<TaxonomyUserProperty> {
  return listed('listing user properties', () => lenient(client).GET('/api/2/taxonomy/user-property', signalInit(options)), (data) => data.data);
}

/** Every annotation category (or the one named `category`). */
export function listAnnotationCategories(
  client: AppClient,
  params: ListAnnotationCategoriesParams = {},
  options: ListOptions = {},
): Listing<AnnotationCategory> {
  const get = () => lenient(client).GET('/api/3/annotation-categories', withQuery(params, options));
  return listed('listing annotation categories', get, (data) => data.data);
}

/** Every event type of the tracking plan; `showDeleted` includes the deleted ones. */
export function listEventTypes(client: AppClient, params: ListEventTypesParams = {}, options: ListOptions = {}): Listing<TaxonomyEventType> {
  return listed('listing event types', () => lenient(client).GET('/api/2/taxonomy/event', withQuery(params, options)), (data) => data.data);
}

/**
 * Every event property: of `event_type` (its own and the shared ones it uses), else the
 * shared ones; `event_property` keeps the one of that name.
 */
export function listEventProperties(client: AppClient, params: ListEventPropertiesParams = {}, options: ListOptions = {}): Listing<TaxonomyEventProperty> {
  const get = () => lenient(client).GET('/api/2/taxonomy/event-property', withQuery(params, options));
  return listed('listing event properties', get, (data) => data.data);
}

const DAY_MS = 86_400_000;
/** Days one deletion listing spans at most past its first day: within "six months" whichever months. */
export const MAX_DELETION_LISTING_DAYS = 180;

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** `start_day`…`end_day` cut into listings of at most `MAX_DELETION_LISTING_DAYS` + 1 days; as it is when it is not a range of days. */
function deletionWindows(params: ListDeletionJobsParams): ListDeletionJobsParams[] {
  const first = Date.parse(`${params.start_day}T00:00:00Z`);
  const last = Date.parse(`${params.end_day}T00:00:00Z`);
  if (Number.isNaN(first) || Number.isNaN(last) || last < first) return [params];
  const windows: ListDeletionJobsParams[] = [];
  for (let from = first; from <= last; from += (MAX_DELETION_LISTING_DAYS + 1) * DAY_MS) {
    windows.push({ start_day: day(from), end_day: day(Math.min(last, from + MAX_DELETION_LISTING_DAYS * DAY_MS)) });
  }
  return windows;
}

/**
 * Every deletion job whose `day` lies in `start_day`…`end_day` (inclusive), in day order. A
 * range longer than one listing allows is asked for in consecutive windows of at most 181
 * days, the next once the previous one's jobs are consumed. Days that are not `YYYY-MM-DD`
 * go to the service as they are (which answers 400: `BadRequestError`).
 */
export function listDeletionJobs(client: AppClient, params: ListDeletionJobsParams, options: ListOptions = {}): Listing<DeletionJob> {
  return listing(async function* () {
    for (const query of deletionWindows(params)) {
      const get = () => lenient(client).GET('/api/2/deletions/users', withQuery(query, options));
      yield* oneAnswer(`listing deletion jobs from ${query.start_day} to ${query.end_day}`, get, (jobs) => jobs);
    }
  });
}

/** Every event type of the project with this week's totals and how charts treat it. */
export function listEventTypeTotals(client: AppClient, options: ListOptions = {}): Listing<EventTypeSummary> {
  return listed('listing event type totals', () => lenient(client).GET('/api/2/events/list', signalInit(options)), (data) => data.data);
}

/** Events per user-activity request unless `limit` says otherwise: the parameter's default and maximum. */
const USER_ACTIVITY_PAGE = 1000;

/**
 * Every event of the user `params.user` (an `svc_id`), in the order of `direction`, `limit` per
 * request (default 1000), each request from the events read so far. Events the user gets
 * meanwhile shift the pages of `direction: 'latest'`: one may be read twice.
 */
export function listUserEvents(client: AppClient, params: ListUserEventsParams, options: ListOptions = {}): Listing<UserActivityEvent> {
  const limit = params.limit ?? USER_ACTIVITY_PAGE;
  const get = (offset: number) => lenient(client).GET('/api/2/useractivity', withQuery({ ...params, limit, offset }, options));
  return offsetListing(`listing the events of user ${params.user}`, limit, get, (data) => data.events);
}
