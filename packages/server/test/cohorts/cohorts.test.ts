// Cohorts through the Prism proxy: uploads (by user ID and by service ID, validation only,
// invalid IDs, replacement), incremental membership, the listing, cohorts as reporting
// segments, export jobs (in progress, completed, file, seven days), tenant isolation, and
// the typed client's helpers end to end.
import { createAppClient, exportCohort, updateCohortMembership, uploadCohort } from '@svc/client';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';
import { postJson, send } from '../support/http.js';

let h: Harness;
let now = Date.UTC(2026, 10, 10, 12);
const heldJobs: (() => Promise<void>)[] = [];
let holdJobs = false;
const basic = (p: { api_key: string; secret_key: string }) => ({ authorization: `Basic ${Buffer.from(`${p.api_key}:${p.secret_key}`).toString('base64')}` });
const json = (value: unknown) => encodeURIComponent(JSON.stringify(value));

beforeAll(async () => {
  h = await startHarness(['ingest', 'app'], {
    clock: () => now,
    cohortExportScheduler: (job) => (holdJobs ? heldJobs.push(job) : void setImmediate(() => void job())),
    // Small enough that a file of the four users with properties goes through a signed link.
    cohortInlineFileBytes: 100,
  });
  const events = ['ana-0001', 'lee-0002', 'kim-0003', 'max-0004'].map((user, i) => ({
    event_type: 'Play',
    user_id: user,
    time: Date.UTC(2026, 10, 2, 10 + i),
    country: i % 2 === 0 ? 'Portugal' : 'Germany',
  }));
  events.push({ event_type: '$identify', user_id: 'ana-0001', time: Date.UTC(2026, 10, 2, 9), user_properties: { $set: { plan: 'pro, annual' } } } as never);
  const sent = await postJson(`${h.proxied.ingest}/batch`, { api_key: h.project.api_key, events });
  expect(sent.status, JSON.stringify(sent.body)).toBe(200);
  await h.server.store.flush();
}, 120_000);
afterAll(() => h?.close());

const app = (path: string, init: RequestInit = {}, project = h.project) => send(`${h.proxied.app}${path}`, { ...init, headers: { 'content-type': 'application/json', ...basic(project), ...(init.headers as Record<string, string>) } });
const post = (path: string, body: unknown, project = h.project) => app(path, { method: 'POST', body: JSON.stringify(body) }, project);
const upload = (fields: Record<string, unknown>) => ({ name: 'Listeners', app_id: h.project.app_id, id_type: 'BY_USER_ID', owner: 'ana@example.com', published: true, ...fields });
const svcIdOf = async (userId: string) => (await h.server.store.entities.svcIdsOfUsers(h.project.app_id, [userId])).get(userId)!;

test('an upload by user ID creates a cohort of the users it matches; the listing shows it; reporting segments by it', async () => {
  const created = await post('/api/3/cohorts/upload', upload({ ids: ['ana-0001', 'lee-0002', 'nobody'] }));
  expect(created.status).toBe(200);
  expect(created.body.metadata).toEqual({ matched: 2, totals: 3, invalid_ids_sample: ['nobody'] });
  const cohortId = created.body.cohortId as string;
  const listed = await app('/api/3/cohorts?includeSyncInfo=true');
  expect(listed.status).toBe(200);
  expect(listed.body.cohorts).toContainEqual(expect.objectContaining({ id: cohortId, name: 'Listeners', size: 2, owners: ['ana@example.com'], type: 'uploaded', syncMetadata: [] }));
  const inCohort = await app(`/api/2/events/segmentation?start=20261102&end=20261102&e=${json({ event_type: 'Play' })}&s=${json([{ prop: 'userdata_cohort', op: 'is', values: [cohortId] }])}`);
  expect(inCohort.status).toBe(200);
  expect(inCohort.body.data.series).toEqual([[2]]);
  const outside = await app(`/api/2/events/segmentation?start=20261102&end=20261102&e=${json({ event_type: 'Play' })}&s=${json([{ prop: 'userdata_cohort', op: 'is not', values: [cohortId] }])}`);
  expect(outside.body.data.series).toEqual([[2]]);
});

test('validation only, invalid IDs refused, replacement, unknown cohorts', async () => {
  const before = (await app('/api/3/cohorts')).body.cohorts.length;
  const validated = await post('/api/3/cohorts/upload', upload({ ids: [String(await svcIdOf('kim-0003')), '999999'], id_type: 'BY_SVC_ID', skip_save: true }));
  expect(validated.body).toEqual({ cohortId: null, metadata: { matched: 1, totals: 2, invalid_ids_sample: ['999999'] } });
  const refused = await post('/api/3/cohorts/upload', upload({ ids: ['kim-0003', 'ghost'], skip_invalid_ids: false }));
  expect(refused.status).toBe(400);
  expect(refused.body.error).toMatchObject({ http_code: 400, type: 'INVALID_IDS', metadata: { invalid_ids: ['ghost'] } });
  expect((await app('/api/3/cohorts')).body.cohorts.length).toBe(before);

  const { cohortId } = (await post('/api/3/cohorts/upload', upload({ ids: ['kim-0003'] }))).body;
  const replaced = await post('/api/3/cohorts/upload', upload({ name: 'Renamed', ids: ['max-0004', 'lee-0002'], existing_cohort_id: cohortId }));
  expect(replaced.body.cohortId).toBe(cohortId);
  expect((await app('/api/3/cohorts')).body.cohorts).toContainEqual(expect.objectContaining({ id: cohortId, name: 'Renamed', size: 2 }));
  expect((await post('/api/3/cohorts/upload', upload({ ids: ['kim-0003'], existing_cohort_id: 'nope123' }))).status).toBe(404);
  expect((await post('/api/3/cohorts/upload', upload({ ids: ['kim-0003'], app_id: h.otherProject.app_id }))).status).toBe(400);
  const { owner: _owner, ...withoutOwner } = upload({ ids: ['kim-0003'] });
  const invalid = await post('/api/3/cohorts/upload', withoutOwner);
  expect(invalid.status).toBe(400);
  expect(invalid.body.error).toMatchObject({ http_code: 400, type: 'INVALID_REQUEST' });
  // Prism answers malformed JSON itself: sent to the server directly.
  const malformed = await send(`${h.direct}/api/3/cohorts/membership`, { method: 'POST', headers: { 'content-type': 'application/json', ...basic(h.project) }, body: '{"cohort_id": ' });
  expect(malformed.status).toBe(400);
  expect(malformed.body.error).toMatchObject({ http_code: 400, type: 'INVALID_REQUEST' });
});

test('membership changes apply in order, skip invalid IDs, and refuse a count group that does not match', async () => {
  const { cohortId } = (await post('/api/3/cohorts/upload', upload({ ids: ['ana-0001'] }))).body;
  const changed = await post('/api/3/cohorts/membership', {
    cohort_id: cohortId,
    memberships: [
      { ids: [String(await svcIdOf('lee-0002')), String(await svcIdOf('kim-0003'))], id_type: 'BY_ID', operation: 'ADD' },
      { ids: ['kim-0003', 'ghost'], id_type: 'BY_NAME', operation: 'REMOVE' },
    ],
  });
  expect(changed.status).toBe(200);
  expect(changed.body).toEqual({
    cohort_id: cohortId,
    memberships_result: [
      { skipped_ids: [], id_type: 'BY_ID', operation: 'ADD' },
      { skipped_ids: ['ghost'], id_type: 'BY_NAME', operation: 'REMOVE' },
    ],
  });
  expect((await app('/api/3/cohorts')).body.cohorts).toContainEqual(expect.objectContaining({ id: cohortId, size: 2 }));
  const strict = await post('/api/3/cohorts/membership', { cohort_id: cohortId, skip_invalid_ids: false, memberships: [{ ids: ['max-0004', 'ghost'], id_type: 'BY_NAME', operation: 'ADD' }] });
  expect(strict.status).toBe(400);
  expect((await app('/api/3/cohorts')).body.cohorts).toContainEqual(expect.objectContaining({ id: cohortId, size: 2 }));
  expect((await post('/api/3/cohorts/membership', { cohort_id: cohortId, count_group: 'Company', memberships: [{ ids: ['max-0004'], id_type: 'BY_NAME', operation: 'ADD' }] })).status).toBe(400);
  expect((await post('/api/3/cohorts/membership', { cohort_id: 'nope123', memberships: [{ ids: ['max-0004'], id_type: 'BY_NAME', operation: 'ADD' }] })).status).toBe(404);
});

test('an export is a background job: in progress, completed, its file with user properties, gone after seven days', async () => {
  const { cohortId } = (await post('/api/3/cohorts/upload', upload({ ids: ['ana-0001', 'lee-0002'] }))).body;
  holdJobs = true;
  const requested = await app(`/api/5/cohorts/request/${cohortId}?props=1&propKeys=country&propKeys=gp:plan`);
  holdJobs = false;
  expect(requested.status).toBe(202);
  const requestId = requested.body.request_id as string;
  expect((await app(`/api/5/cohorts/request-status/${requestId}`)).body).toEqual({ request_id: requestId, cohort_id: cohortId, async_status: 'JOB INPROGRESS' });
  expect((await app(`/api/5/cohorts/request/${requestId}/file`)).status).toBe(409);
  await heldJobs.shift()!();
  const status = await app(`/api/5/cohorts/request-status/${requestId}`);
  expect(status.status).toBe(200);
  expect(status.body.async_status).toBe('JOB COMPLETED');
  const file = await app(`/api/5/cohorts/request/${requestId}/file`);
  expect(file.status).toBe(200);
  const lines = (file.body as string).trim().split('\n');
  expect(lines[0]).toBe('svc_id,user_id,country,gp:plan');
  expect(lines.slice(1).sort()).toEqual([`${await svcIdOf('ana-0001')},ana-0001,Portugal,"pro, annual"`, `${await svcIdOf('lee-0002')},lee-0002,Germany,`].sort());

  now += 7 * 86_400_000 + 1;
  try {
    expect((await app(`/api/5/cohorts/request-status/${requestId}`)).status).toBe(404);
    expect((await app(`/api/5/cohorts/request/${requestId}/file`)).status).toBe(404);
  } finally {
    now -= 7 * 86_400_000 + 1;
  }
});

test('a large file is answered with 302 to a signed link of the server, valid one minute, without credentials', async () => {
  const { cohortId } = (await post('/api/3/cohorts/upload', upload({ ids: ['ana-0001', 'lee-0002', 'kim-0003', 'max-0004'] }))).body;
  const requestId = (await app(`/api/5/cohorts/request/${cohortId}?props=1&propKeys=country&propKeys=gp:plan`)).body.request_id as string;
  await expect.poll(async () => (await app(`/api/5/cohorts/request-status/${requestId}`)).status).toBe(200);
  // Prism's proxy follows redirects itself: the 302 is seen at the server.
  const file = await send(`${h.direct}/api/5/cohorts/request/${requestId}/file`, { redirect: 'manual', headers: basic(h.project) });
  expect(file.status).toBe(302);
  const link = new URL(file.headers.get('location')!);
  expect(link.pathname).toBe(`/api/5/cohorts/downloads/${requestId}`);
  const downloaded = await send(link.href);
  expect(downloaded.status).toBe(200);
  expect((downloaded.body as string).trim().split('\n')).toHaveLength(5);
  const tampered = new URL(link);
  tampered.searchParams.set('signature', 'f'.repeat(64));
  expect((await send(tampered.href)).status).toBe(403);
  const forged = new URL(link);
  forged.searchParams.set('expires', String(Number(link.searchParams.get('expires')) + 3600));
  expect((await send(forged.href)).status).toBe(403);
  now += 61_000;
  try {
    expect((await send(link.href)).status).toBe(403);
  } finally {
    now -= 61_000;
  }
  const client = createAppClient({ apiKey: h.project.api_key, secretKey: h.project.secret_key, baseUrl: h.direct });
  const exported = await exportCohort(client, cohortId, { props: true, propKeys: ['country'], pollIntervalMs: 10 });
  expect(exported.redirected).toBe(true);
  expect(exported.members).toHaveLength(4);
});

test('a fifth export while four are in progress gets 429 with Retry-After', async () => {
  const other = h.otherProject;
  const { cohortId } = (await post('/api/3/cohorts/upload', { ...upload({ ids: ['nobody-1'] }), app_id: other.app_id }, other)).body;
  holdJobs = true;
  try {
    for (let i = 0; i < 4; i++) expect((await app(`/api/5/cohorts/request/${cohortId}`, {}, other)).status).toBe(202);
    const refused = await app(`/api/5/cohorts/request/${cohortId}`, {}, other);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(refused.body.error).toMatch(/4 cohort exports in progress/);
  } finally {
    holdJobs = false;
  }
  for (const job of heldJobs.splice(0)) await job();
  expect((await app(`/api/5/cohorts/request/${cohortId}`, {}, other)).status).toBe(202);
});

test('a key never reaches another project’s cohorts; requests without credentials get 401', async () => {
  const { cohortId } = (await post('/api/3/cohorts/upload', upload({ ids: ['ana-0001'] }))).body;
  expect((await app('/api/3/cohorts', {}, h.otherProject)).body.cohorts.map((c: { id: string }) => c.id)).not.toContain(cohortId);
  expect((await app(`/api/5/cohorts/request/${cohortId}`, {}, h.otherProject)).status).toBe(404);
  expect((await post('/api/3/cohorts/membership', { cohort_id: cohortId, memberships: [{ ids: ['ana-0001'], id_type: 'BY_NAME', operation: 'REMOVE' }] }, h.otherProject)).status).toBe(404);
  // Prism answers a request without credentials itself: the server's own answer is read directly.
  expect(await send(`${h.direct}/api/3/cohorts`)).toMatchObject({ status: 401, body: { code: 401 } });
});

test('the typed client’s helpers upload, change and export a cohort against the server', async () => {
  const client = createAppClient({ apiKey: h.project.api_key, secretKey: h.project.secret_key, baseUrl: h.proxied.app });
  const uploaded = await uploadCohort(client, { name: 'Client', app_id: h.project.app_id, id_type: 'BY_USER_ID', ids: ['ana-0001', 'kim-0003'], owner: 'ana@example.com', published: false });
  expect(uploaded.cohortId).not.toBeNull();
  const changed = await updateCohortMembership(client, uploaded.cohortId!, [{ ids: ['max-0004'], id_type: 'BY_NAME', operation: 'ADD' }]);
  expect(changed.failure).toBeNull();
  const exported = await exportCohort(client, uploaded.cohortId!, { pollIntervalMs: 10 });
  expect(exported.redirected).toBe(false);
  expect(exported.members.map((m) => m.user_id).sort()).toEqual(['ana-0001', 'kim-0003', 'max-0004']);
});
