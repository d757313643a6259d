// Handlers of the deletion group: requests add users to the project's staging job (or one
// job per project of the organization), listings show the jobs' state, and a staging job's
// users can be removed; a background step scrubs the jobs whose day has come.
import type { components } from '../generated/deletion.js';
import type { HandlerRequest, Reply } from '../http/operations.js';
import type { DeletionJobRecord, DeletionStore, Store } from '../store/types.js';
import type { Project, Tenancy } from '../shared/tenancy.js';
import { dayOfNewJob, statusOf, utcDay } from './jobs.js';

type DeletionJob = components['schemas']['DeletionJob'];
type Operation = 'createDeletionRequest' | 'listDeletionJobs' | 'deleteDeletionJobEntry';

/** 1 request per second and 8 at a time per project, across the deletion operations. */
const PACE_MS = 1000;
const PARALLEL = 8;
/** Longest listing range: six months. */
const MAX_LIST_DAYS = 183;

type Refusal = { status: 429; body: { code: 429; error: string }; headers: Record<string, string> };

export class DeletionHandlers {
  private readonly lastRequest = new Map<number, number>();
  private readonly running = new Map<number, number>();
  private scrubbing: Promise<void> = Promise.resolve();

  /**
   * `journal` is loaded before a scrub (see `advance`); `forgetDevices` removes what other
   * groups keep per device (session replays).
   */
  constructor(
    private readonly store: DeletionStore,
    private readonly journal: Pick<Store, 'flush'>,
    private readonly tenancy: Tenancy,
    private readonly forgetDevices: (appId: number, deviceIds: string[]) => Promise<void>,
  ) {}

  /**
   * Scrubs every job whose day has come (the journal is loaded first, so nothing acknowledged
   * escapes). Per-device data goes first: the scrub forgets which devices were the users'.
   */
  advance(now: number): Promise<void> {
    this.scrubbing = this.scrubbing.then(async () => {
      const today = utcDay(now);
      const due = await this.store.dueDeletionJobs(today);
      if (due.length === 0) return;
      await this.journal.flush();
      for (const job of due) {
        await this.forgetDevices(job.appId, await this.store.devicesOfDeletionJob(job.appId, job.day));
        await this.store.scrubDeletionJob(job.appId, job.day, today);
      }
    });
    return this.scrubbing;
  }

  /** Runs a request within the pace and parallelism of its project. */
  private async paced<R>(request: HandlerRequest<Operation>, work: () => Promise<R>): Promise<R | Refusal> {
    const appId = request.caller.project!.app_id;
    const last = this.lastRequest.get(appId);
    const running = this.running.get(appId) ?? 0;
    if ((last !== undefined && request.receivedAt - last < PACE_MS) || running >= PARALLEL) {
      return { status: 429, body: { code: 429, error: `Too many deletion requests: at most 1 per second and ${PARALLEL} at a time per project` }, headers: { 'retry-after': '1' } };
    }
    this.lastRequest.set(appId, request.receivedAt);
    this.running.set(appId, running + 1);
    try {
      await this.advance(request.receivedAt);
      return await work();
    } finally {
      this.running.set(appId, (this.running.get(appId) ?? 1) - 1);
    }
  }

  private jobBody(job: DeletionJobRecord, today: string, withApp: boolean): DeletionJob {
    return {
      day: job.day,
      status: statusOf(job, today),
      svc_ids: job.entries.map((e) => ({ svc_id: e.svcId, requested_on_day: e.requestedOnDay, ...(e.requester !== null ? { requester: e.requester } : {}) })),
      ...(withApp ? { app: job.appId } : {}),
      ...(job.scrubbedOn !== null ? { active_scrub_done_date: job.scrubbedOn } : {}),
    };
  }

  createDeletionRequest = (request: HandlerRequest<'createDeletionRequest'>): Promise<Reply<'createDeletionRequest'>> =>
    this.paced(request, async () => {
      const body = request.body;
      const caller = request.caller.project!;
      const svcIds = body.svc_ids ?? [];
      const userIds = body.user_ids ?? [];
      if (svcIds.length + userIds.length === 0) return { status: 400 as const, body: { code: 400, error: 'Name at least one user in svc_ids or user_ids' } };
      if (svcIds.length + userIds.length > 100) return { status: 400 as const, body: { code: 400, error: 'At most 100 IDs per request (svc_ids and user_ids together)' } };
      const fromOrg = body.delete_from_org === true;
      const ignoreInvalid = fromOrg || body.ignore_invalid_ids === true || body.ignore_invalid_id === true;
      const projects: Project[] = fromOrg ? this.tenancy.projects.filter((p) => p.org_id === caller.org_id) : [caller];
      const today = utcDay(request.receivedAt);
      const plans: { project: Project; found: { svcId: number; userId?: string }[]; invalid: (number | string)[] }[] = [];
      for (const project of projects) {
        const svcIdsOfUsers = await this.store.svcIdsOfUsers(project.app_id, userIds);
        const byUser = userIds.map((userId) => ({ userId, svcId: svcIdsOfUsers.get(userId) }));
        const candidates = [...svcIds, ...byUser.flatMap((u) => (u.svcId === undefined ? [] : [u.svcId]))];
        const withData = await this.store.svcIdsWithData(project.app_id, candidates);
        const found = [...svcIds.filter((id) => withData.has(id)).map((svcId) => ({ svcId })), ...byUser.filter((u) => u.svcId !== undefined && withData.has(u.svcId)).map((u) => ({ svcId: u.svcId!, userId: u.userId }))];
        const invalid = [...svcIds.filter((id) => !withData.has(id)), ...byUser.filter((u) => u.svcId === undefined || !withData.has(u.svcId)).map((u) => u.userId)];
        plans.push({ project, found, invalid });
      }
      const [own] = plans;
      if (!ignoreInvalid && own!.invalid.length > 0) return { status: 400 as const, body: { code: 400, error: 'Some requested users have no data in the project; no user was marked', invalid_ids: own!.invalid } };
      const jobs: DeletionJob[] = [];
      for (const { project, found, invalid } of plans) {
        // One job per project that holds data for the users (the caller's always answers).
        if (fromOrg && found.length === 0 && project !== caller) continue;
        const day = (await this.store.stagingDeletionJob(project.app_id, today)) ?? dayOfNewJob(today);
        const requester = body.requester ?? null;
        await this.store.addDeletionEntries(project.app_id, day, found.map((f) => ({ svcId: f.svcId, requester, requestedOnDay: today })));
        const [job] = await this.store.deletionJobs(project.app_id, day, day);
        const requested = new Set(found.map((f) => f.svcId));
        const answer = this.jobBody({ ...job!, entries: job!.entries.filter((e) => requested.has(e.svcId)) }, today, fromOrg);
        if (body.include_mapped_user_ids) {
          const mappedUserIds = await this.store.userIdsOfSvcIds(
            project.app_id,
            answer.svc_ids.map((entry) => entry.svc_id),
          );
          answer.svc_ids = answer.svc_ids.map((entry) => {
            const userId = mappedUserIds.get(entry.svc_id);
            return userId === undefined ? entry : { ...entry, user_id: userId };
          });
        }
        const foundUsers = found.flatMap((f) => (f.userId === undefined ? [] : [f.userId]));
        jobs.push({ ...answer, ...(foundUsers.length > 0 ? { user_ids: foundUsers } : {}), ...(ignoreInvalid ? { invalid_ids: invalid } : {}) });
      }
      return { status: 200 as const, body: fromOrg ? jobs : jobs[0]! };
    });

  listDeletionJobs = (request: HandlerRequest<'listDeletionJobs'>): Promise<Reply<'listDeletionJobs'>> =>
    this.paced(request, async () => {
      const { start_day: from, end_day: to } = request.query as { start_day: string; end_day: string };
      const days = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000;
      if (Number.isNaN(days) || days < 0) return { status: 400 as const, body: { code: 400, error: `end_day (${to}) is before start_day (${from}) or not a date` } };
      if (days > MAX_LIST_DAYS) return { status: 400 as const, body: { code: 400, error: `The range has ${days + 1} days; at most six months` } };
      const today = utcDay(request.receivedAt);
      const jobs = await this.store.deletionJobs(request.caller.project!.app_id, from, to);
      return { status: 200 as const, body: jobs.map((job) => this.jobBody(job, today, false)) };
    });

  deleteDeletionJobEntry = (request: HandlerRequest<'deleteDeletionJobEntry'>): Promise<Reply<'deleteDeletionJobEntry'>> =>
    this.paced(request, async () => {
      const { svc_id: svcId, day } = request.path as { svc_id: number; day: string };
      const appId = request.caller.project!.app_id;
      const [job] = await this.store.deletionJobs(appId, day, day);
      const entry = job?.entries.find((e) => e.svcId === svcId);
      if (!job || !entry) return { status: 404 as const, body: { code: 404, error: `No deletion job on ${day} holds svc_id ${svcId}` } };
      const status = statusOf(job, utcDay(request.receivedAt));
      if (status !== 'Staging') return { status: 409 as const, body: { code: 409, error: `The job of ${day} is ${status} and can no longer be modified` } };
      await this.store.removeDeletionEntry(appId, day, svcId);
      return { status: 200 as const, body: { svc_id: svcId, requested_on_day: entry.requestedOnDay, ...(entry.requester !== null ? { requester: entry.requester } : {}) } };
    });
}
