import { intOption, sleep as abortableSleep } from './batching.js';
import { lenient, type AppClient } from './clients.js';
import type { CohortExportStatus } from './cohort-types.js';
import { parseCsv } from './csv.js';
import type { ErrorBody } from './types.js';

export interface ExportCohortOptions {
  /** Include user properties in the file (`props=1`); default false. */
  props?: boolean;
  /** With `props`: only these user properties (custom ones with the prefix `gp:`); default all. */
  propKeys?: readonly string[];
  /** Wait before the first status poll, in milliseconds; default 2000. */
  pollIntervalMs?: number;
  /** Each further wait is the previous one times this factor; default 2. */
  backoffFactor?: number;
  /** Longest wait between two polls, in milliseconds; default 60000. */
  maxPollIntervalMs?: number;
  /** Status polls before giving up with a `CohortExportError` of stage `timeout`; default 30. */
  maxPolls?: number;
  /** Waits between polls; default a timer. Tests pass one that records the delays. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /**
   * Fetch for the pre-signed object-store link of a large cohort (sent without this
   * service's credentials); default `globalThis.fetch`.
   */
  fetch?: typeof fetch;
  signal?: AbortSignal;
}

/** One member of an exported cohort. */
export interface CohortMember {
  svc_id: string;
  /** null when the member has no user ID. */
  user_id: string | null;
  /** The exported user properties that have a value, by column name. */
  properties: Record<string, string>;
}

export interface CohortExport {
  requestId: string;
  cohortId: string;
  /** User property columns of the file, in file order. */
  propertyColumns: string[];
  members: CohortMember[];
  /** Status polls made. */
  polls: number;
  /** true when the file came through the 302 redirect to an object-store link. */
  redirected: boolean;
}

export type CohortExportStage = 'request' | 'status' | 'file' | 'link' | 'timeout';

/** An export that did not end with a file: which step failed, and the answer it got. */
export class CohortExportError extends Error {
  constructor(
    readonly stage: CohortExportStage,
    /** HTTP status of the failing answer; null for a timeout. */
    readonly status: number | null,
    /** The parsed error body of the failing answer, if any. */
    readonly body: ErrorBody | unknown,
    message: string,
  ) {
    super(message);
    this.name = 'CohortExportError';
  }
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * Exports one cohort: requests the export, polls its status with exponential backoff until
 * `JOB COMPLETED` (at most `maxPolls` polls), downloads the file (from the body, or from the
 * object-store link of a 302 answer, fetched without credentials) and parses the CSV.
 * Throws `CohortExportError` when a step is refused or the job does not complete in time.
 */
export async function exportCohort(client: AppClient, cohortId: string, options: ExportCohortOptions = {}): Promise<CohortExport> {
  const maxPolls = intOption(options.maxPolls, 30, 'maxPolls', 1);
  const maxInterval = intOption(options.maxPollIntervalMs, 60_000, 'maxPollIntervalMs', 0);
  let interval = Math.min(intOption(options.pollIntervalMs, 2_000, 'pollIntervalMs', 0), maxInterval);
  const factor = options.backoffFactor ?? 2;
  if (!(factor >= 1)) throw new RangeError('backoffFactor must be ≥ 1');
  const wait = options.sleep ?? abortableSleep;
  const { signal } = options;
  const init = signal ? { signal } : {};

  const requested = await lenient(client).GET('/api/5/cohorts/request/{id}', {
    params: {
      path: { id: cohortId },
      query: options.props ? { props: 1, ...(options.propKeys?.length ? { propKeys: [...options.propKeys] } : {}) } : {},
    },
    ...init,
  });
  if (!requested.data) throw refused('request', requested.response, requested.error);
  const requestId = requested.data.request_id;

  let polls = 0;
  let status: CohortExportStatus | undefined;
  while (status?.async_status !== 'JOB COMPLETED') {
    if (polls >= maxPolls) {
      throw new CohortExportError('timeout', null, undefined, `export ${requestId} did not complete within ${maxPolls} status polls`);
    }
    await wait(interval, signal);
    interval = Math.min(interval * factor, maxInterval);
    polls++;
    const polled = await lenient(client).GET('/api/5/cohorts/request-status/{request_id}', {
      params: { path: { request_id: requestId } },
      ...init,
    });
    if (!polled.data) throw refused('status', polled.response, polled.error);
    status = polled.data;
  }

  const { text, redirected } = await downloadFile(client, requestId, options);
  return { requestId, cohortId: requested.data.cohort_id, polls, redirected, ...parseCohortCsv(text) };
}

/** The file of a completed export: the body of a 200, or the object-store link of a 302. */
async function downloadFile(
  client: AppClient,
  requestId: string,
  options: ExportCohortOptions,
): Promise<{ text: string; redirected: boolean }> {
  const get = (redirect: RequestRedirect) =>
    lenient(client).GET('/api/5/cohorts/request/{request_id}/file', {
      params: { path: { request_id: requestId } },
      parseAs: 'text',
      redirect,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  // `manual` keeps the credentials away from the object store; a browser hides the
  // `Location` of a manual redirect (opaqueredirect), so there the request is repeated
  // with `follow` (each repeat yields a fresh one-minute link).
  let answer = await get('manual');
  if (answer.response.type === 'opaqueredirect') answer = await get('follow');
  if (answer.data !== undefined) return { text: answer.data, redirected: answer.response.redirected };
  const location = answer.response.headers.get('location');
  if (!REDIRECT_STATUSES.has(answer.response.status) || !location) throw refused('file', answer.response, answer.error);

  const link = await (options.fetch ?? globalThis.fetch)(location, options.signal ? { signal: options.signal } : {});
  if (!link.ok) {
    throw new CohortExportError('link', link.status, await link.text(), `object-store link answered ${link.status} (links are valid one minute)`);
  }
  return { text: await link.text(), redirected: true };
}

function refused(stage: CohortExportStage, response: Response, body: unknown): CohortExportError {
  const detail = typeof body === 'object' && body !== null && 'error' in body ? `: ${String(body.error)}` : '';
  return new CohortExportError(stage, response.status, body, `cohort export ${stage} answered ${response.status}${detail}`);
}

/** Reads the export file: columns `svc_id`, `user_id`, then one per exported user property. */
export function parseCohortCsv(text: string): { propertyColumns: string[]; members: CohortMember[] } {
  const [header, ...rows] = parseCsv(text);
  const svcIdColumn = header?.indexOf('svc_id') ?? -1;
  if (!header || svcIdColumn < 0) throw new SyntaxError('cohort file has no svc_id column');
  const userIdColumn = header.indexOf('user_id');
  const propertyColumns = header.filter((_, i) => i !== svcIdColumn && i !== userIdColumn);
  const members = rows
    .filter((row) => row.some((cell) => cell !== ''))
    .map((row) => {
      const properties: Record<string, string> = {};
      header.forEach((column, i) => {
        const value = row[i] ?? '';
        if (i !== svcIdColumn && i !== userIdColumn && value !== '') properties[column] = value;
      });
      const userId = userIdColumn < 0 ? '' : (row[userIdColumn] ?? '');
      return { svc_id: row[svcIdColumn] ?? '', user_id: userId === '' ? null : userId, properties };
    });
  return { propertyColumns, members };
}
