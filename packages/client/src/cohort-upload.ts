import { intOption } from './batching.js';
import { lenient, type AppClient } from './clients.js';
import {
  MAX_COHORT_SIZE,
  MAX_IDS_PER_REQUEST,
  type CohortError,
  type CohortUpload,
  type MembershipChange,
  type MembershipIdType,
  type MembershipOperation,
  type MembershipUpdate,
  type MembershipUpdateResult,
} from './cohort-types.js';
import type { ErrorBody } from './types.js';

/** A request that was refused; it and every later request were not applied. */
export interface CohortRequestFailure {
  /** HTTP status of the answer; null when the request failed without an answer. */
  status: number | null;
  /** The parsed error body (`CohortError` for 400/404), or the thrown error of a network failure. */
  error: CohortError | ErrorBody | unknown;
  /** Entry (index into the caller's changes; 0 for an upload) of the first ID not applied. */
  entryIndex: number;
  /** Index of that ID within its entry's `ids`. */
  idOffset: number;
}

interface Slice {
  entryIndex: number;
  start: number;
  end: number;
}

/**
 * Splits the IDs of consecutive entries into requests of at most `max` IDs in total,
 * keeping their order; an entry larger than the room left continues in the next request.
 */
export function planIdRequests(sizes: readonly number[], max: number): Slice[][] {
  const requests: Slice[][] = [];
  let current: Slice[] = [];
  let room = max;
  sizes.forEach((size, entryIndex) => {
    for (let start = 0; start < size; ) {
      const end = Math.min(size, start + room);
      current.push({ entryIndex, start, end });
      room -= end - start;
      start = end;
      if (room === 0) {
        requests.push(current);
        current = [];
        room = max;
      }
    }
  });
  if (current.length > 0) requests.push(current);
  return requests;
}

async function attempt<T>(send: () => Promise<{ data?: T; error?: unknown; response: Response }>, signal: AbortSignal | undefined) {
  try {
    const { data, error, response } = await send();
    return data !== undefined ? { data } : { failed: { status: response.status, error } };
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    return { failed: { status: null, error } };
  }
}

export interface UploadCohortInput extends Omit<CohortUpload, 'ids'> {
  ids: readonly string[];
}

export interface UploadCohortOptions {
  /** IDs per request, at most (and default) 100,000. */
  maxIdsPerRequest?: number;
  signal?: AbortSignal;
}

export interface UploadCohortSummary {
  /** The created or replaced cohort (null when nothing was saved: `skip_save`, or the first request failed). */
  cohortId: string | null;
  /** HTTP requests made. */
  requests: number;
  /** IDs sent in accepted requests. */
  idsApplied: number;
  /** Sum of `metadata.matched` over the upload requests. */
  matched: number;
  /** Sum of `metadata.totals` over the upload requests. */
  totals: number;
  /** `invalid_ids_sample` of the upload requests and `skipped_ids` of the membership requests. */
  invalidIds: string[];
  /** The refused request, after which nothing more was sent; null when all were accepted. */
  failure: CohortRequestFailure | null;
}

/** `BY_SVC_ID` → `BY_ID`, `BY_USER_ID` → `BY_NAME`: the membership names of the same kinds of ID. */
const MEMBERSHIP_ID_TYPE: Record<CohortUpload['id_type'], MembershipIdType> = { BY_SVC_ID: 'BY_ID', BY_USER_ID: 'BY_NAME' };

/**
 * Uploads a cohort of any number of IDs (at most 2 million): the first 100,000 go with the
 * upload (creating the cohort, or replacing the members of `existing_cohort_id`), the rest
 * are added with membership requests of at most 100,000 IDs (`BY_SVC_ID` as `BY_ID`,
 * `BY_USER_ID` as `BY_NAME`, count group `cg` or `User`). With `skip_save`, every part is
 * sent as a validating upload instead and nothing is saved.
 *
 * Stops at the first refused request and reports it in `failure` (with the first ID not
 * applied); HTTP and network errors do not throw, aborting does.
 */
export async function uploadCohort(
  client: AppClient,
  upload: UploadCohortInput,
  options: UploadCohortOptions = {},
): Promise<UploadCohortSummary> {
  const max = intOption(options.maxIdsPerRequest, MAX_IDS_PER_REQUEST, 'maxIdsPerRequest', 1, MAX_IDS_PER_REQUEST);
  if (upload.ids.length === 0) throw new RangeError('an upload needs at least one ID');
  if (upload.ids.length > MAX_COHORT_SIZE) throw new RangeError(`a cohort holds at most ${MAX_COHORT_SIZE} IDs, got ${upload.ids.length}`);
  const { signal } = options;
  const init = signal ? { signal } : {};
  const summary: UploadCohortSummary = { cohortId: null, requests: 0, idsApplied: 0, matched: 0, totals: 0, invalidIds: [], failure: null };
  const parts = planIdRequests([upload.ids.length], max).map(([slice]) => slice!);

  for (const [index, part] of parts.entries()) {
    signal?.throwIfAborted();
    const ids = upload.ids.slice(part.start, part.end);
    summary.requests++;
    if (index === 0 || upload.skip_save) {
      const answer = await attempt(() => lenient(client).POST('/api/3/cohorts/upload', { body: { ...upload, ids }, ...init }), signal);
      if (answer.failed) return { ...summary, failure: { ...answer.failed, entryIndex: 0, idOffset: part.start } };
      summary.cohortId = answer.data.cohortId;
      summary.matched += answer.data.metadata.matched;
      summary.totals += answer.data.metadata.totals;
      summary.invalidIds.push(...answer.data.metadata.invalid_ids_sample);
    } else {
      const body: MembershipUpdate = {
        cohort_id: summary.cohortId ?? '',
        count_group: upload.cg ?? 'User',
        memberships: [{ ids, id_type: MEMBERSHIP_ID_TYPE[upload.id_type], operation: 'ADD' }],
        ...(upload.skip_invalid_ids !== undefined ? { skip_invalid_ids: upload.skip_invalid_ids } : {}),
      };
      const answer = await attempt(() => lenient(client).POST('/api/3/cohorts/membership', { body, ...init }), signal);
      if (answer.failed) return { ...summary, failure: { ...answer.failed, entryIndex: 0, idOffset: part.start } };
      summary.invalidIds.push(...answer.data.memberships_result.flatMap((result) => result.skipped_ids));
    }
    summary.idsApplied += ids.length;
  }
  return summary;
}

export interface MembershipChangeInput extends Omit<MembershipChange, 'ids'> {
  ids: readonly string[];
}

export interface UpdateCohortMembershipOptions {
  /** Must equal the cohort's count group; default (on the server) `User`. */
  count_group?: MembershipUpdate['count_group'];
  /** Default (on the server) true: invalid IDs are skipped and listed. */
  skip_invalid_ids?: MembershipUpdate['skip_invalid_ids'];
  /** IDs per request over all entries, at most (and default) 100,000. */
  maxIdsPerRequest?: number;
  signal?: AbortSignal;
}

/** What became of one of the caller's changes. */
export interface MembershipChangeSummary {
  id_type: MembershipIdType;
  operation: MembershipOperation;
  /** IDs of this change sent in accepted requests. */
  idsApplied: number;
  skipped_ids: string[];
}

export interface UpdateCohortMembershipSummary {
  cohortId: string;
  requests: number;
  /** One summary per change, in the caller's order. */
  changes: MembershipChangeSummary[];
  failure: CohortRequestFailure | null;
}

/**
 * Adds and removes cohort members in order, splitting the changes into requests of at most
 * 100,000 IDs in total (a large change continues in the next request). Stops at the first
 * refused request and reports it in `failure`; HTTP and network errors do not throw.
 */
export async function updateCohortMembership(
  client: AppClient,
  cohortId: string,
  changes: readonly MembershipChangeInput[],
  options: UpdateCohortMembershipOptions = {},
): Promise<UpdateCohortMembershipSummary> {
  const max = intOption(options.maxIdsPerRequest, MAX_IDS_PER_REQUEST, 'maxIdsPerRequest', 1, MAX_IDS_PER_REQUEST);
  const { signal } = options;
  const summary: UpdateCohortMembershipSummary = {
    cohortId,
    requests: 0,
    changes: changes.map(({ id_type, operation }) => ({ id_type, operation, idsApplied: 0, skipped_ids: [] })),
    failure: null,
  };
  for (const slices of planIdRequests(changes.map((change) => change.ids.length), max)) {
    signal?.throwIfAborted();
    const body: MembershipUpdate = {
      cohort_id: cohortId,
      memberships: slices.map(({ entryIndex, start, end }) => {
        const { id_type, operation, ids } = changes[entryIndex]!;
        return { id_type, operation, ids: ids.slice(start, end) };
      }),
      ...(options.count_group !== undefined ? { count_group: options.count_group } : {}),
      ...(options.skip_invalid_ids !== undefined ? { skip_invalid_ids: options.skip_invalid_ids } : {}),
    };
    summary.requests++;
    const answer = await attempt(() => lenient(client).POST('/api/3/cohorts/membership', { body, ...(signal ? { signal } : {}) }), signal);
    if (answer.failed) {
      const [first] = slices;
      return { ...summary, failure: { ...answer.failed, entryIndex: first!.entryIndex, idOffset: first!.start } };
    }
    const results: MembershipUpdateResult['memberships_result'] = answer.data.memberships_result;
    slices.forEach(({ entryIndex, start, end }, i) => {
      const change = summary.changes[entryIndex]!;
      change.idsApplied += end - start;
      change.skipped_ids.push(...(results[i]?.skipped_ids ?? []));
    });
  }
  return summary;
}
