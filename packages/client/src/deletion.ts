import { RETRY_STATUSES, intOption, type BatchFailure } from './batching.js';
import { lenient, type AppClient } from './clients.js';
import { retryAfterMs } from './errors.js';
import type { DeletionComponents } from './generated/roles.js';
import { createPacer, systemClock, type Clock } from './pacing.js';
import type { ErrorBody } from './types.js';

type Schemas = DeletionComponents['schemas'];

export type DeletionJob = Schemas['DeletionJob'];
export type DeletionJobEntry = Schemas['DeletionJobEntry'];
/** A user to delete: a service ID (integer) or a user ID (string). */
export type UserIdentifier = Schemas['UserIdentifier'];
export type DeletionRequestError = Schemas['DeletionRequestError'];
/** The fields of a deletion request sent with every chunk: everything but the IDs. */
export type DeleteUsersFields = Omit<Schemas['DeletionRequestFields'], 'svc_ids' | 'user_ids'>;

/** Most IDs (service IDs and user IDs together) per deletion request. */
export const MAX_IDS_PER_DELETION_REQUEST = 100;
/** Least time between the starts of two deletion requests of a project (1 request per second). */
export const MIN_DELETION_REQUEST_INTERVAL_MS = 1000;
/** Most deletion requests in flight at once per project. */
export const MAX_PARALLEL_DELETION_REQUESTS = 8;

export interface DeleteUsersOptions {
  /** Sent with every request: `requester`, `ignore_invalid_ids`, `delete_from_org`, `include_mapped_user_ids`. */
  fields?: DeleteUsersFields;
  /** IDs per request, at most (and default) 100. */
  maxIdsPerRequest?: number;
  /** Requests in flight at once, at most (and default) 8. */
  concurrency?: number;
  /** Least time between the starts of two requests, retries included: at least (and default) 1000 ms. */
  minIntervalMs?: number;
  /** Retries of one request after 429, 5xx or a network error; default 3. */
  maxRetries?: number;
  /** Wait before a retry when the answer carries no `Retry-After`; default 1000 ms. */
  retryDelayMs?: number;
  /** Time source for the pacing and the retry waits (tests pass a fake one). */
  clock?: Clock;
  /** Aborts: waiting and pending requests are cancelled and the returned promise rejects. */
  signal?: AbortSignal;
}

export type DeletionErrorBody = DeletionRequestError | ErrorBody;

export interface DeletionFailure extends BatchFailure<DeletionErrorBody> {
  /** The IDs of the refused request (`indexes` point at them in the caller's list). */
  ids: UserIdentifier[];
}

export interface DeleteUsersSummary {
  /** HTTP requests made, retries included. */
  requests: number;
  /** The jobs answered, in the order of the requests (one per project with `delete_from_org`). */
  jobs: DeletionJob[];
  /**
   * Requested IDs the service reported in `invalid_ids` (no data), when invalid IDs are ignored.
   * With `delete_from_org`, an ID counts only when every job answered for its request lists it.
   */
  invalidIds: UserIdentifier[];
  /** Requests refused as a whole (400 names unknown users when they are not ignored: none of its users was marked). */
  failures: DeletionFailure[];
}

function checkId(id: unknown, index: number): asserts id is UserIdentifier {
  const valid = typeof id === 'string' ? id.length > 0 : Number.isSafeInteger(id) && (id as number) > 0;
  if (!valid) throw new TypeError(`ids[${index}] must be a positive integer service ID or a non-empty user ID, got ${JSON.stringify(id)}`);
}

/**
 * Requests the deletion of any number of users, in requests of at most 100 IDs (service IDs
 * and user IDs mixed in the caller's order), paced to at most 1 request per second and 8 in
 * flight, as the deletion interface allows per project. Each request stands alone: a 400 for
 * unknown users (when they are not ignored) marks none of that request's users but does not
 * stop the others. 429 (after `Retry-After`), 5xx and network errors are retried; adding a
 * user to the staging job again has no further effect. Never throws for HTTP or network
 * errors (see `failures`); rejects only when `signal` aborts or an ID is not a valid ID.
 */
export async function deleteUsers(
  client: AppClient,
  ids: readonly UserIdentifier[],
  options: DeleteUsersOptions = {},
): Promise<DeleteUsersSummary> {
  ids.forEach(checkId);
  const maxIds = intOption(options.maxIdsPerRequest, MAX_IDS_PER_DELETION_REQUEST, 'maxIdsPerRequest', 1, MAX_IDS_PER_DELETION_REQUEST);
  const concurrency = intOption(options.concurrency, MAX_PARALLEL_DELETION_REQUESTS, 'concurrency', 1, MAX_PARALLEL_DELETION_REQUESTS);
  const interval = intOption(options.minIntervalMs, MIN_DELETION_REQUEST_INTERVAL_MS, 'minIntervalMs', MIN_DELETION_REQUEST_INTERVAL_MS);
  const maxRetries = intOption(options.maxRetries, 3, 'maxRetries', 0);
  const retryDelayMs = intOption(options.retryDelayMs, 1000, 'retryDelayMs', 0);
  const clock = options.clock ?? systemClock;
  const { signal } = options;
  const pace = createPacer(interval, clock);

  const chunks: number[][] = [];
  for (let start = 0; start < ids.length; start += maxIds) {
    chunks.push(Array.from({ length: Math.min(maxIds, ids.length - start) }, (_, i) => start + i));
  }
  const answered: { jobs: DeletionJob[] }[] = new Array(chunks.length);
  const failures: DeletionFailure[] = [];
  let requests = 0;

  const deliver = async (chunkIndex: number) => {
    const indexes = chunks[chunkIndex]!;
    const chunkIds = indexes.map((i) => ids[i]!);
    const svcIds = chunkIds.filter((id): id is number => typeof id === 'number');
    const userIds = chunkIds.filter((id): id is string => typeof id === 'string');
    // A chunk is never empty, so at least one of the two ID fields is present.
    const body = {
      ...options.fields,
      ...(svcIds.length > 0 ? { svc_ids: svcIds } : {}),
      ...(userIds.length > 0 ? { user_ids: userIds } : {}),
    } as Schemas['DeletionRequest'];
    for (let attempts = 1; ; attempts++) {
      await pace(signal);
      requests++;
      let status: number | null = null;
      let error: unknown;
      let response: Response | undefined;
      try {
        const answer = await lenient(client).POST('/api/2/deletions/users', { body, ...(signal ? { signal } : {}) });
        response = answer.response;
        status = response.status;
        if (answer.data !== undefined) {
          answered[chunkIndex] = { jobs: Array.isArray(answer.data) ? answer.data : [answer.data] };
          return;
        }
        error = answer.error;
      } catch (thrown) {
        if (signal?.aborted) throw signal.reason;
        error = thrown;
      }
      if ((status === null || RETRY_STATUSES.has(status)) && attempts <= maxRetries) {
        await clock.sleep(retryAfterMs(response?.headers, clock.now()) ?? retryDelayMs, signal);
        continue;
      }
      failures.push({ status, error, indexes, ids: chunkIds, attempts });
      return;
    }
  };

  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, chunks.length) }, async () => {
      while (next < chunks.length) await deliver(next++);
    }),
  );

  const jobs: DeletionJob[] = [];
  const invalidIds: UserIdentifier[] = [];
  answered.forEach((chunk, chunkIndex) => {
    if (!chunk) return;
    jobs.push(...chunk.jobs);
    if (chunk.jobs.length === 0) return;
    for (const i of chunks[chunkIndex]!) {
      if (chunk.jobs.every((job) => job.invalid_ids?.includes(ids[i]!))) invalidIds.push(ids[i]!);
    }
  });
  failures.sort((a, b) => (a.indexes[0] ?? 0) - (b.indexes[0] ?? 0));
  return { requests, jobs, invalidIds, failures };
}
