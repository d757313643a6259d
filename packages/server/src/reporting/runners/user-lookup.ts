// Users one at a time, for user search and user activity: who a user is and what their events
// say of them. A user is every `svc_id` whose events count as one (SEMANTICS.md, "Users and
// identity"): merges are applied in storage already (a merged device's events carry the user's
// id; `svc_merges` keeps the old ids), and a user mapped into another counts as that other.
// Users are only ever found through the project's own events: another project's ids find nothing.
import { integers } from '../../store/dialect.js';
import { EXPORT_COLUMNS, EXPORT_JSON_COLUMNS } from '../../store/export-lines.js';
import { compareText, type RunnerContext } from './context.js';

/** A user: their `svc_id` (the mapped one) and every own `svc_id` of their events. */
export interface UserIds {
  svcId: number;
  members: number[];
}

/** What a user's events say of them. */
export interface UserSummary extends UserIds {
  userId: string | null;
  firstMs: number;
  lastMs: number;
  events: number;
  sessions: number;
  purchases: number;
  revenue: number;
  /** The latest event (time, then ingestion), as EXPORT_COLUMNS with JSON columns as text. */
  latest: Record<string, unknown>;
}

const numbers = (rows: Record<string, unknown>[], column: string) => rows.map((row) => Number(row[column]));

/** The mappings read by each request (a context is one request's): read once, however many lookups it makes. */
const requestMappings = new WeakMap<RunnerContext, Promise<Map<number, number>>>();

/** The project's current user mappings: from `svc_id` → the `svc_id` it counts as. */
function mappings(ctx: RunnerContext): Promise<Map<number, number>> {
  let read = requestMappings.get(ctx);
  if (!read) {
    read = ctx.query(ctx.dialect.userMappings(ctx.appId)).then((rows) => new Map(rows.map((row) => [Number(row.from_svc), Number(row.to_svc)])));
    requestMappings.set(ctx, read);
  }
  return read;
}

/** Of these own `svc_id`s, those with events in the project. */
async function withEvents(ctx: RunnerContext, svcIds: Iterable<number>): Promise<number[]> {
  const list = integers(svcIds);
  if (list === '') return [];
  return numbers(await ctx.query(`SELECT DISTINCT svc_id FROM events WHERE app_id = ${ctx.appId} AND svc_id IN (${list})`), 'svc_id');
}

/** The users these own `svc_id`s (or ids mapped into them) are, each with every own id of theirs that has events. */
async function usersOf(ctx: RunnerContext, own: Iterable<number>): Promise<UserIds[]> {
  const mapped = await mappings(ctx);
  const users = new Set([...own].map((svcId) => mapped.get(svcId) ?? svcId));
  const candidates = new Map<number, number[]>([...users].map((svcId) => [svcId, [svcId]]));
  for (const [from, to] of mapped) candidates.get(to)?.push(from);
  const present = new Set(await withEvents(ctx, [...candidates.values()].flat()));
  return [...candidates]
    .map(([svcId, members]) => ({ svcId, members: members.filter((member) => present.has(member)).sort((a, b) => a - b) }))
    .filter((user) => user.members.length > 0);
}

/**
 * The user an `svc_id` is: itself, the user it was merged into, or the user either is mapped
 * into; undefined when none of these has events in the project.
 */
export async function userOfSvcId(ctx: RunnerContext, svcId: number): Promise<UserIds | undefined> {
  const merged = numbers(await ctx.query(`SELECT to_svc FROM svc_merges WHERE from_svc = ${integers([svcId])}`), 'to_svc');
  const [user] = await usersOf(ctx, [merged[0] ?? svcId]);
  return user;
}

/** The users of the own `svc_id`s with events that meet `condition`, the `limit` most recently seen. */
async function usersWhere(ctx: RunnerContext, condition: string, limit: number): Promise<UserIds[]> {
  const own = await ctx.query(
    `SELECT svc_id, max(time) AS last_time FROM events WHERE app_id = ${ctx.appId} AND svc_id IS NOT NULL AND ${condition} GROUP BY svc_id ORDER BY last_time DESC, svc_id LIMIT ${Math.trunc(limit)}`,
  );
  return usersOf(ctx, numbers(own, 'svc_id'));
}

/** The users whose events carry `id` as their user ID or device ID (at most `limit` own ids, the latest seen). */
export function usersOfId(ctx: RunnerContext, id: string, limit: number): Promise<UserIds[]> {
  const text = ctx.dialect.string(id);
  return usersWhere(ctx, `(user_id = ${text} OR device_id = ${text})`, limit);
}

/** The users whose user IDs start with `prefix` (at most `limit` own ids, the latest seen). */
export function usersOfUserIdPrefix(ctx: RunnerContext, prefix: string, limit: number): Promise<UserIds[]> {
  return usersWhere(ctx, `user_id IS NOT NULL AND ${ctx.dialect.startsWith('user_id', prefix)}`, limit);
}

/** The own `svc_id` of a row as the user it counts as (a CASE over the users' members). */
function userColumn(users: UserIds[]): string {
  const cases = users.flatMap((user) => user.members.filter((member) => member !== user.svcId).map((member) => `WHEN svc_id = ${member} THEN ${user.svcId}`));
  return cases.length === 0 ? 'svc_id' : `CASE ${cases.join(' ')} ELSE svc_id END`;
}

/** The columns of an event as export lines write it (export-lines.ts), JSON columns as text. */
function exportColumns(ctx: RunnerContext): string {
  const json = new Set(EXPORT_JSON_COLUMNS);
  return EXPORT_COLUMNS.map((column) => (json.has(column) ? `${ctx.dialect.jsonText(`"${column}"`)} AS "${column}"` : `"${column}"`)).join(', ');
}

/**
 * What each user's events say of them, in the order of `users`. Aliases are not names of
 * columns: ClickHouse resolves an alias before a column of the same name.
 */
export async function summaries(ctx: RunnerContext, users: UserIds[]): Promise<UserSummary[]> {
  if (users.length === 0) return [];
  const d = ctx.dialect;
  const members = integers(users.flatMap((user) => user.members));
  const rows = await ctx.query(
    `SELECT user_svc_id, min(time) AS first_time, max(time) AS last_time, count(*) AS event_count,
      ${d.distinctCount('CASE WHEN session_id <> -1 THEN session_id END')} AS session_count, max(user_id) AS any_user_id,
      ${d.countWhere('revenue IS NOT NULL')} AS purchases, sum(revenue) AS revenue_sum, ${d.valueAtMax('ingest_seq', d.timeOrderKey('time', 'ingest_seq'))} AS latest_seq
    FROM (SELECT ${userColumn(users)} AS user_svc_id, time, ingest_seq, session_id, user_id, revenue FROM events WHERE app_id = ${ctx.appId} AND svc_id IN (${members}))
    GROUP BY user_svc_id`,
  );
  // None when the users' events were deleted since they were found.
  if (rows.length === 0) return [];
  const latest = await ctx.query(`SELECT ${exportColumns(ctx)} FROM events WHERE app_id = ${ctx.appId} AND ingest_seq IN (${integers(numbers(rows, 'latest_seq'))})`);
  const latestBySeq = new Map(latest.map((row) => [Number(row.ingest_seq), row]));
  const byUser = new Map(rows.map((row) => [Number(row.user_svc_id), row]));
  return users.flatMap((user): UserSummary[] => {
    const row = byUser.get(user.svcId);
    const event = row && latestBySeq.get(Number(row.latest_seq));
    if (!row || !event) return [];
    return [
      {
        ...user,
        userId: row.any_user_id === null || row.any_user_id === undefined ? null : String(row.any_user_id),
        firstMs: Number(row.first_time),
        lastMs: Number(row.last_time),
        events: Number(row.event_count),
        sessions: Number(row.session_count),
        purchases: Number(row.purchases),
        revenue: Number(row.revenue_sum ?? 0),
        latest: event,
      },
    ];
  });
}

/** The user's device IDs, in code unit order. */
export async function deviceIds(ctx: RunnerContext, user: UserIds): Promise<string[]> {
  const rows = await ctx.query(`SELECT DISTINCT device_id FROM events WHERE app_id = ${ctx.appId} AND svc_id IN (${integers(user.members)}) AND device_id IS NOT NULL`);
  return rows.map((row) => String(row.device_id)).sort(compareText);
}

/** The other `svc_id`s whose events are the user's: devices merged into a member, and the members mapped into the user. */
export async function otherSvcIds(ctx: RunnerContext, user: UserIds): Promise<number[]> {
  const merged = numbers(await ctx.query(`SELECT DISTINCT from_svc FROM svc_merges WHERE to_svc IN (${integers(user.members)})`), 'from_svc');
  return [...new Set([...merged, ...user.members])].filter((svcId) => svcId !== user.svcId).sort((a, b) => a - b);
}

/** The user's profile (their current user properties), empty when they have none. */
export async function profileOf(ctx: RunnerContext, user: UserIds): Promise<Record<string, unknown>> {
  const [row] = await ctx.query(ctx.dialect.userProfile(ctx.appId, user.svcId));
  return row?.properties ? (JSON.parse(String(row.properties)) as Record<string, unknown>) : {};
}

/** A page of the user's events, latest or earliest first (time, then ingestion), as EXPORT_COLUMNS rows. */
export async function eventsOf(ctx: RunnerContext, user: UserIds, page: { offset: number; limit: number; latestFirst: boolean }): Promise<Record<string, unknown>[]> {
  const order = page.latestFirst ? 'DESC' : 'ASC';
  return ctx.query(
    `SELECT ${exportColumns(ctx)} FROM events WHERE app_id = ${ctx.appId} AND svc_id IN (${integers(user.members)})
    ORDER BY time ${order}, ingest_seq ${order} LIMIT ${Math.trunc(page.limit)} OFFSET ${Math.trunc(page.offset)}`,
  );
}
