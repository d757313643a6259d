// Handlers of the user mapping group: map or unmap user IDs in every project of the caller's
// organization (reporting then counts a mapped user as its global user), and look them up.
import type { components } from '../generated/usermap.js';
import type { HandlerRequest, Reply } from '../http/operations.js';
import { dataRecord } from '../shared/data-record.js';
import { addTo, firstBucketSince, sumSince, type WindowedCounts } from '../shared/windowed-counts.js';
import type { UserMappingStore } from '../store/types.js';
import type { Tenancy } from '../shared/tenancy.js';

type UserMapping = components['schemas']['UserMapping'];
type MappingRecord = components['schemas']['UserMappingRecord'];

/** 1500 calls in 30 seconds per organization (50 per second over a 30-second window). */
export interface MappingRate {
  calls: number;
  windowSeconds: number;
}

/** The documented rate: 1500 calls in 30 seconds per organization. */
export const MAPPING_RATE: MappingRate = { calls: 1500, windowSeconds: 30 };

export class UserMappingHandlers {
  private readonly calls = new Map<number, WindowedCounts>();

  constructor(
    private readonly store: UserMappingStore,
    private readonly tenancy: Tenancy,
    private readonly rate: MappingRate = MAPPING_RATE,
  ) {}

  /** Counts a call of the organization; the seconds to wait when it is over the rate. */
  private throttled(orgId: number, now: number): number | undefined {
    const second = Math.floor(now / 1000);
    const oldest = second - this.rate.windowSeconds;
    const calls = this.calls.get(orgId) ?? [];
    this.calls.set(orgId, calls);
    if (sumSince(calls, oldest) >= this.rate.calls) {
      // Until the oldest call still counted leaves the window.
      const leaving = firstBucketSince(calls, oldest) ?? second;
      return Math.max(1, leaving + this.rate.windowSeconds - second);
    }
    addTo(calls, second, 1, oldest);
    return undefined;
  }

  createUserMappings = async (request: HandlerRequest<'createUserMappings'>): Promise<Reply<'createUserMappings'>> => {
    const project = request.caller.project!;
    const mapping = request.body.mapping as UserMapping | UserMapping[];
    const mappings = Array.isArray(mapping) ? mapping : [mapping];
    const self = mappings.find((m) => !m.unmap && m.global_user_id === m.user_id);
    if (self) return { status: 400, body: { code: 400, error: `user_id ${self.user_id} cannot be mapped into itself` } };
    const wait = this.throttled(project.org_id, request.receivedAt);
    if (wait !== undefined) {
      return { status: 429, body: { code: 429, error: `Too many mapping calls: at most ${this.rate.calls} in ${this.rate.windowSeconds} seconds per organization` }, headers: { 'retry-after': String(wait) } };
    }
    const projects = this.tenancy.projects.filter((p) => p.org_id === project.org_id).map((p) => p.app_id);
    await this.store.applyUserMappings(
      projects,
      mappings.map((m) => ({ userId: m.user_id, globalUserId: m.unmap ? null : m.global_user_id! })),
    );
    return { status: 200, body: { code: 200, mappings_applied: mappings.length } };
  };

  getUserMappings = async (request: HandlerRequest<'getUserMappings'>): Promise<Reply<'getUserMappings'>> => {
    const userIds = request.query.user_ids!;
    const views = await this.store.userMappings(request.caller.project!.app_id, userIds);
    // Keyed by user IDs: a record without prototype.
    const body = dataRecord<MappingRecord>();
    for (const userId of userIds) {
      const view = views.get(userId);
      const mapped = (users: { svcId: number; userId: string }[]) => users.map((u) => ({ svc_id: u.svcId, user_id: u.userId }));
      body[userId] = view ? { svc_id: view.svcId, mapped_from: mapped(view.mappedFrom), mapped_to: mapped(view.mappedTo) } : {};
    }
    return { status: 200, body };
  };
}
