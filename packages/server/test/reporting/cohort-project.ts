// What the cohort reports' tests (retention, revenue LTV) share: a project loaded with generated
// events, another project with a few events of its own (kept apart), user mappings, and a
// clock fixed inside the data; the query string of a report's parameters; and the check of
// answers against an oracle in time zones whose days are not UTC's.
import { beforeAll, describe, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';
import { postJson, type send } from '../support/http.js';
import { createRandom, type UploadEvent } from './dataset.js';
import { createOracle, type Oracle, type UserMapping } from './oracle.js';

export interface CohortProject {
  h: Harness;
  /** The Basic credentials of the project and of the other project. */
  auth: Record<string, string>;
  otherAuth: Record<string, string>;
}

const basic = (project: { api_key: string; secret_key: string }) => ({ authorization: `Basic ${Buffer.from(`${project.api_key}:${project.secret_key}`).toString('base64')}` });

/** Generous cost limits: the tests ask many questions over long ranges. */
const LIMITS = { concurrentRequests: 5, costPerFiveMinutes: 50_000, costPerHour: 1_000_000_000 };

export async function startCohortProject(uploads: readonly UploadEvent[], otherEvents: readonly UploadEvent[], mappings: readonly UserMapping[], now: number): Promise<CohortProject> {
  const h = await startHarness(['ingest', 'app', 'api'], { reportingLimits: LIMITS, clock: () => now });
  for (let i = 0; i < uploads.length; i += 500) expect((await postJson(`${h.direct}/batch`, { api_key: h.project.api_key, events: uploads.slice(i, i + 500) })).status).toBe(200);
  expect((await postJson(`${h.direct}/batch`, { api_key: h.otherProject.api_key, events: otherEvents })).status).toBe(200);
  for (const { userId, globalUserId } of mappings) {
    expect((await postJson(`${h.proxied.api}/usermap`, { api_key: h.project.api_key, mapping: { user_id: userId, global_user_id: globalUserId } })).status).toBe(200);
  }
  await h.server.store.flush();
  return { h, auth: basic(h.project), otherAuth: basic(h.otherProject) };
}

/** A report's query string: objects as JSON text, every value URL-encoded, undefined left out. */
export function queryString(params: Record<string, unknown>): string {
  return Object.entries(params)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${name}=${encodeURIComponent(typeof value === 'object' ? JSON.stringify(value) : String(value))}`)
    .join('&');
}

/**
 * In two time zones whose days are not UTC's, each question's answer (through the proxy,
 * checked against the spec) equals the oracle's over the uploads.
 */
export function agreesWithOracle<P>(
  setUp: { project: () => CohortProject; uploads: readonly UploadEvent[]; mappings: readonly UserMapping[] },
  questions: [string, P][],
  ask: (params: P) => ReturnType<typeof send>,
  expected: (oracle: Oracle, params: P) => unknown,
): void {
  describe.each(['America/Los_Angeles', 'Asia/Tokyo'])('in %s', (timeZone) => {
    let oracle: Oracle;
    beforeAll(() => {
      const { h } = setUp.project();
      h.server.tenancy.setTimeZone(h.project.app_id, timeZone);
      oracle = createOracle(setUp.uploads, timeZone, setUp.mappings);
    });

    test.each(questions)('%s', async (_, params) => {
      const answer = await ask(params);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body.data).toEqual(expected(oracle, params));
    });
  });
}

export interface VisitingUsers {
  seed: number;
  users: number;
  /** Midnight UTC of the data's first day. */
  firstDayMs: number;
  /** Users are new on one of the first `newDays` days, and visit until day `days`. */
  newDays: number;
  days: number;
  /** The chance that a user skips a day after their first. */
  skip: number;
}

/**
 * Users who open the app on their first day and on some later days; some start on an
 * anonymous device (joined when they sign in), some come back on a new device (merged).
 * `visit` adds the events of a visit after its `Open`. In time order: anonymous devices are
 * seen before their users sign in on them.
 */
export function visitingUsers(
  o: VisitingUsers,
  visit: (k: number, random: () => number, at: number, id: { user_id?: string; device_id: string }, who: { platform: string; country: string }) => UploadEvent[],
): UploadEvent[] {
  const random = createRandom(o.seed);
  const events: UploadEvent[] = [];
  const platforms = ['iOS', 'Android', 'Web'];
  const countries = ['Germany', 'Japan', 'United States'];
  for (let k = 0; k < o.users; k++) {
    const firstDay = Math.floor(random() * o.newDays);
    const who = { platform: platforms[k % 3]!, country: countries[Math.floor(random() * 3)]! };
    for (let day = firstDay; day < o.days; day++) {
      if (day > firstDay && random() < o.skip) continue;
      const at = o.firstDayMs + day * 86_400_000 + Math.floor(random() * 86_400_000);
      const anonymous = (k % 5 === 0 && day === firstDay) || (k % 7 === 0 && day === firstDay + 3);
      const device = k % 7 === 0 && day >= firstDay + 3 ? `moved-${k}` : `device-${k}`;
      const id = anonymous ? { device_id: device } : { user_id: `user-${k}`, device_id: device };
      events.push({ event_type: 'Open', time: at, ...id, ...who }, ...visit(k, random, at, id, who));
    }
  }
  return events.sort((a, b) => a.time - b.time);
}
