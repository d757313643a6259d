// Handlers of the cohorts group: uploaded cohorts of users (count group `User`), their
// incremental membership, the listing, and exports as background jobs (request → status →
// file) valid seven days.
import { randomUUID } from 'node:crypto';
import { describeProblems, type RequestProblem } from '@svc/openapi-validation';
import type { components } from '../generated/cohorts.js';
import type { Caller, HandlerRequest, Reply } from '../http/operations.js';
import { invalidLink, type SignedLinks } from '../shared/signed-links.js';
import { tooManyItems } from '../http/too-many-items.js';
import type { UserLookups } from '../store/types.js';
import type { CohortExportLimits } from './limits.js';
import { type CohortExportJob, type CohortStore, type StoredCohort } from './store.js';

type Cohort = components['schemas']['Cohort'];
type CohortError = components['schemas']['CohortError'];

export const MAX_MEMBERS = 2_000_000;
const EXPORT_VALID_MS = 7 * 86_400_000;
const LINK_VALID_SECONDS = 60;
/** Files above this many bytes are answered with 302 to a signed link. */
export const DEFAULT_INLINE_FILE_BYTES = 1024 * 1024;
/** Built-in user properties an export can carry: from each member's latest event. */
const BUILT_IN_COLUMNS = new Map([
  ['version', 'app_version'],
  ['country', 'country'],
  ['city', 'city'],
  ['region', 'region'],
  ['DMA', 'dma'],
  ['language', 'language'],
  ['platform', 'platform'],
  ['device', 'device_model'],
]);

const appOf = (caller: Caller) => caller.project!.app_id;
const cohortError = <S extends 400 | 404>(status: S, type: string, message: string, metadata: Record<string, unknown> = {}) => ({
  status,
  body: { error: { http_code: status, type, message, metadata } } satisfies CohortError,
});
const unknownCohort = (id: string) => cohortError(404, 'NOT_FOUND', `No cohort with id ${id} in this project`, { cohort_id: id });

/** A request to change cohorts that breaks the spec: 413 above the IDs' `maxItems`, else the `error` object. */
export function rejectCohortChange(operation: 'createCohortUpload' | 'createCohortMembershipUpdate') {
  return (problems: RequestProblem[]): { status: 400; body: CohortError } | { status: 413; body: { code: number; error: string } } => {
    const tooMany = tooManyItems(problems);
    if (tooMany) return { status: 413, body: { code: 413, error: `Payload too large: at most ${tooMany.limit} IDs in ${tooMany.path}` } };
    const where = problems[0]?.errors?.[0]?.instancePath.split('/')[1];
    return cohortError(400, 'INVALID_REQUEST', `Invalid request: ${describeProblems({ valid: false, operation, problems })}`, where ? { field: where } : {});
  };
}

const invalidCohortLink = invalidLink('request the file again for a new link');

/** A download link whose parameters break the spec was not made by this server: 403 like any other invalid link. */
export const rejectDownloadLink = () => invalidCohortLink;

/** Runs an export job; tests hold jobs back to see them in progress. */
export type ExportScheduler = (job: () => Promise<void>) => void;

export interface CohortHandlerOptions {
  clock: () => number;
  limits: CohortExportLimits;
  /** Signs and checks the download links. */
  links: SignedLinks;
  schedule?: ExportScheduler;
  inlineFileBytes?: number;
}

export class CohortHandlers {
  private readonly clock: () => number;
  private readonly schedule: ExportScheduler;

  constructor(
    private readonly cohorts: CohortStore,
    private readonly users: Pick<UserLookups, 'svcIdsWithData' | 'svcIdsOfUsers' | 'userIdsOfSvcIds'>,
    private readonly options: CohortHandlerOptions,
  ) {
    this.clock = options.clock;
    this.schedule = options.schedule ?? ((job) => void setImmediate(() => void job()));
  }

  /** The svc_ids of `ids` (service IDs or user IDs) in the project; `invalid` the IDs that name no user. */
  private async resolve(appId: number, ids: readonly string[], bySvcId: boolean): Promise<{ svcIds: number[]; invalid: string[] }> {
    const svcIds: number[] = [];
    const invalid: string[] = [];
    const known = bySvcId ? await this.users.svcIdsWithData(appId, ids.filter((id) => /^\d{1,15}$/.test(id)).map(Number)) : undefined;
    const byUser = known ? undefined : await this.users.svcIdsOfUsers(appId, ids);
    for (const id of ids) {
      const svcId = known ? (/^\d{1,15}$/.test(id) && known.has(Number(id)) ? Number(id) : undefined) : byUser!.get(id);
      if (svcId === undefined) invalid.push(id);
      else svcIds.push(svcId);
    }
    return { svcIds, invalid };
  }

  listCohorts = async (request: HandlerRequest<'listCohorts'>): Promise<Reply<'listCohorts'>> => {
    const appId = appOf(request.caller);
    const cohorts = (await this.cohorts.cohorts(appId)).map((cohort) => ({ ...listed(appId, cohort), ...(request.query.includeSyncInfo ? { syncMetadata: [] } : {}) }));
    return { status: 200, body: { cohorts } };
  };

  createCohortUpload = async (request: HandlerRequest<'createCohortUpload'>): Promise<Reply<'createCohortUpload'>> => {
    const appId = appOf(request.caller);
    const upload = request.body;
    if (upload.app_id !== appId) return cohortError(400, 'INVALID_REQUEST', `app_id ${upload.app_id} is not the project of these credentials`, { field: 'app_id' });
    if (upload.cg !== undefined && upload.cg !== 'User') return cohortError(400, 'INVALID_REQUEST', `This service keeps cohorts of users only; cg ${upload.cg} is not supported`, { field: 'cg' });
    if (upload.existing_cohort_id !== undefined && !(await this.cohorts.cohort(appId, upload.existing_cohort_id))) return unknownCohort(upload.existing_cohort_id);
    const { svcIds, invalid } = await this.resolve(appId, upload.ids, upload.id_type === 'BY_SVC_ID');
    if (invalid.length > 0 && upload.skip_invalid_ids === false) {
      return cohortError(400, 'INVALID_IDS', `${invalid.length} of ${upload.ids.length} IDs are invalid; nothing was saved because skip_invalid_ids is false`, { invalid_ids: invalid });
    }
    const metadata = { matched: new Set(svcIds).size, totals: upload.ids.length, invalid_ids_sample: invalid.slice(0, 100) };
    if (upload.skip_save) return { status: 200, body: { cohortId: null, metadata } };
    const cohortId = await this.cohorts.save(appId, { name: upload.name, owner: upload.owner, published: upload.published, existingId: upload.existing_cohort_id }, svcIds, this.clock());
    return { status: 200, body: { cohortId, metadata } };
  };

  createCohortMembershipUpdate = async (request: HandlerRequest<'createCohortMembershipUpdate'>): Promise<Reply<'createCohortMembershipUpdate'>> => {
    const appId = appOf(request.caller);
    const update = request.body;
    const cohort = await this.cohorts.cohort(appId, update.cohort_id);
    if (!cohort) return unknownCohort(update.cohort_id);
    if ((update.count_group ?? 'User') !== 'User') return cohortError(400, 'INVALID_REQUEST', `count_group ${update.count_group} is not the cohort's count group (User)`, { field: 'count_group' });
    const total = update.memberships.reduce((sum, m) => sum + m.ids.length, 0);
    if (total > 100_000) return cohortError(400, 'INVALID_REQUEST', `${total} IDs in one request; at most 100,000`, { field: 'memberships' });
    const resolved = await Promise.all(update.memberships.map((m) => this.resolve(appId, m.ids, m.id_type === 'BY_ID')));
    const invalid = resolved.flatMap((r) => r.invalid);
    if (invalid.length > 0 && update.skip_invalid_ids === false) {
      return cohortError(400, 'INVALID_IDS', `${invalid.length} of ${total} IDs are invalid; nothing was changed because skip_invalid_ids is false`, { invalid_ids: invalid });
    }
    const changes = update.memberships.map((m, i) => ({ add: m.operation === 'ADD', svcIds: resolved[i]!.svcIds }));
    const members = new Set(await this.cohorts.members(appId, cohort.id));
    for (const change of changes) for (const svcId of change.svcIds) change.add ? members.add(svcId) : members.delete(svcId);
    if (members.size > MAX_MEMBERS) return cohortError(400, 'INVALID_REQUEST', `The cohort would have ${members.size} members; at most ${MAX_MEMBERS}`, { field: 'memberships' });
    await this.cohorts.changeMembers(appId, cohort.id, changes, this.clock());
    const memberships_result = update.memberships.map((m, i) => ({ skipped_ids: resolved[i]!.invalid, id_type: m.id_type, operation: m.operation }));
    return { status: 200, body: { cohort_id: cohort.id, memberships_result } };
  };

  getCohortExport = async (request: HandlerRequest<'getCohortExport'>): Promise<Reply<'getCohortExport'>> => {
    const appId = appOf(request.caller);
    const cohort = await this.cohorts.cohort(appId, request.path.id);
    if (!cohort) return { status: 404, body: { code: 404, error: `No cohort with id ${request.path.id} in this project` } };
    const admission = await this.options.limits.admit(appId, this.clock());
    if ('message' in admission) return { status: 429, body: { code: 429, error: admission.message }, headers: { 'retry-after': String(admission.retryAfterSeconds) } };
    const propKeys = request.query.props === 1 ? [...(request.query.propKeys ?? [])] : null;
    const requestId = randomUUID();
    try {
      await this.cohorts.requestExport(appId, cohort.id, propKeys, this.clock(), requestId);
    } catch (error) {
      admission.done();
      throw error;
    }
    this.schedule(() => this.runExport(appId, requestId).finally(admission.done));
    return { status: 202, body: { request_id: requestId, cohort_id: cohort.id } };
  };

  getCohortExportStatus = async (request: HandlerRequest<'getCohortExportStatus'>): Promise<Reply<'getCohortExportStatus'>> => {
    const job = await this.validJob(appOf(request.caller), request.path.request_id);
    if (!job) return requestNotFound(request.path.request_id);
    const status = { request_id: job.requestId, cohort_id: job.cohortId };
    return job.file === null ? { status: 202, body: { ...status, async_status: 'JOB INPROGRESS' } } : { status: 200, body: { ...status, async_status: 'JOB COMPLETED' } };
  };

  getCohortExportFile = async (request: HandlerRequest<'getCohortExportFile'>): Promise<Reply<'getCohortExportFile'>> => {
    const job = await this.validJob(appOf(request.caller), request.path.request_id);
    if (!job) return requestNotFound(request.path.request_id);
    if (job.file === null) return { status: 409, body: { code: 409, error: `Export request ${job.requestId} is JOB INPROGRESS; poll its status until JOB COMPLETED` } };
    if (Buffer.byteLength(job.file) <= (this.options.inlineFileBytes ?? DEFAULT_INLINE_FILE_BYTES)) return { status: 200, body: job.file, headers: { 'content-type': 'text/csv; charset=utf-8' } };
    const link = new URL(`/api/5/cohorts/downloads/${encodeURIComponent(job.requestId)}`, request.origin);
    link.search = this.options.links.sign(job.requestId, LINK_VALID_SECONDS).toString();
    return { status: 302, body: undefined, headers: { location: link.href } };
  };

  getCohortExportDownload = async (request: HandlerRequest<'getCohortExportDownload'>): Promise<Reply<'getCohortExportDownload'>> => {
    const { request_id: requestId } = request.path;
    const { expires, signature } = request.query as { expires: number; signature: string };
    if (!this.options.links.verify(requestId, expires, signature)) return invalidCohortLink;
    const job = await this.cohorts.exportJobById(requestId);
    if (!job || job.file === null || this.clock() - job.requestedAt > EXPORT_VALID_MS) return requestNotFound(requestId);
    return { status: 200, body: job.file, headers: { 'content-type': 'text/csv; charset=utf-8' } };
  };

  private async validJob(appId: number, requestId: string): Promise<CohortExportJob | undefined> {
    const job = await this.cohorts.exportJob(appId, requestId);
    return job && this.clock() - job.requestedAt <= EXPORT_VALID_MS ? job : undefined;
  }

  /** Writes the file of an export job: members as of now, with the requested user properties. */
  private async runExport(appId: number, requestId: string): Promise<void> {
    const job = (await this.cohorts.exportJob(appId, requestId))!;
    const members = await this.cohorts.members(appId, job.cohortId);
    const properties = job.propKeys === null ? new Map<number, Map<string, string>>() : await this.cohorts.userProperties(appId, members, BUILT_IN_COLUMNS);
    const columns =
      job.propKeys === null ? [] : job.propKeys.length > 0 ? job.propKeys : [...new Set([...properties.values()].flatMap((values) => [...values.keys()]))].sort();
    const userIds = await this.users.userIdsOfSvcIds(appId, members);
    const lines = [['svc_id', 'user_id', ...columns], ...members.map((svcId) => [String(svcId), userIds.get(svcId) ?? '', ...columns.map((c) => properties.get(svcId)?.get(c) ?? '')])];
    await this.cohorts.completeExport(requestId, lines.map((cells) => cells.map(csvCell).join(',')).join('\n') + '\n');
  }
}

const requestNotFound = (requestId: string) => ({ status: 404 as const, body: { code: 404, error: `No export request ${requestId}, or it is older than seven days` } });

const csvCell = (cell: string) => (/[",\r\n]/.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell);

function listed(appId: number, cohort: StoredCohort): Cohort {
  const seconds = (ms: number) => Math.floor(ms / 1000);
  return {
    appId,
    archived: false,
    definition: { version: 3, countGroup: { name: 'User', is_computed: false }, cohortType: 'UNIQUES', andClauses: [], referenceFrameTimeParams: {} },
    description: '',
    finished: true,
    id: cohort.id,
    name: cohort.name,
    owners: [cohort.owner],
    viewers: [],
    published: cohort.published,
    size: cohort.size,
    type: 'uploaded',
    lastMod: seconds(cohort.lastMod),
    createdAt: seconds(cohort.createdAt),
    lastComputed: seconds(cohort.lastMod),
    hidden: false,
    metadata: null,
    view_count: null,
    popularity: null,
    last_viewed: null,
    chart_id: null,
    edit_id: null,
    location_id: null,
    is_predictive: false,
    is_official_content: false,
    shortcut_ids: [],
  };
}
