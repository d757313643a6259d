// getUserSearch (`GET /api/2/usersearch`, specs/reporting/operations/getUserSearch.yaml): the
// project's users by `svc_id`, user ID or device ID, else by the start of user IDs, with what
// their latest event says of them (runners/user-lookup.ts).
import { utcTimeText } from '../../store/export-lines.js';
import { summaries, type UserIds, userOfSvcId, usersOfId, usersOfUserIdPrefix } from '../runners/user-lookup.js';
import type { ReportingOperation } from './operation.js';

/** The cost of a user search or user activity request (the platform's "every other endpoint"). */
export const USER_LOOKUP_COST = 1;

/** Matches answered at most, the most recently seen. */
const MAX_MATCHES = 100;

/** A whole number that can be an `svc_id` answers carry exactly (below 2^53). */
const SVC_ID = /^[1-9][0-9]{0,15}$/;

const asSvcId = (text: string) => (SVC_ID.test(text) && Number(text) <= Number.MAX_SAFE_INTEGER ? Number(text) : undefined);

export const getUserSearch: ReportingOperation<'getUserSearch', { user: string }> = {
  // The spec requires `user`, a non-empty text of at most 1024 characters.
  parameters: (request) => ({ user: request.query.user! }),

  cost: () => USER_LOOKUP_COST,

  answer: async (ctx, { user }) => {
    const svcId = asSvcId(user);
    const bySvcId = svcId === undefined ? undefined : await userOfSvcId(ctx, svcId);
    const byId = await usersOfId(ctx, user, MAX_MATCHES);
    const exact = new Map<number, UserIds>([...(bySvcId ? [bySvcId] : []), ...byId].map((found) => [found.svcId, found]));
    const users = exact.size > 0 ? [...exact.values()] : await usersOfUserIdPrefix(ctx, user, MAX_MATCHES);
    const type = bySvcId ? 'match_svc_id' : exact.size > 0 ? 'match_user_or_device_id' : users.length > 0 ? 'match_user_prefix' : 'no_match';
    const found = (await summaries(ctx, users)).sort((a, b) => b.lastMs - a.lastMs || a.svcId - b.svcId).slice(0, MAX_MATCHES);
    const text = (value: unknown) => (value === null || value === undefined ? null : String(value));
    return {
      status: 200,
      body: {
        matches: found.map((match) => ({ svc_id: match.svcId, user_id: match.userId, last_seen: utcTimeText(match.lastMs), country: text(match.latest.country), platform: text(match.latest.platform) })),
        type,
      },
    };
  },
};
