// Doc 000 cohorts: the typed client and its cohort helpers against the Prism mock (every
// answer checked against the spec), then requests the spec forbids and their controls.
import { exportCohort, updateCohortMembership, uploadCohort } from '@svc/client';
import { describe, expect, test } from 'vitest';
import { mockAppClient, operationLog } from './support/client-calls.js';
import { BASIC, type ForbiddenCase, type ValidCase, forbiddenRequests, get, json, validRequests } from './support/mock-requests.js';
import { bundle } from '@svc/openapi-validation';

const log = operationLog();
const app = mockAppClient();
const noWait = async () => {};
const upload = { name: 'Beta testers', app_id: 187520, id_type: 'BY_USER_ID', ids: ['ana-1001', 'lee-2207'], owner: 'ana@example.com', published: true } as const;
const membership = { cohort_id: '2q8w4er', memberships: [{ ids: ['498120377310'], id_type: 'BY_ID', operation: 'ADD' }] } as const;

describe('typed client against the mock', () => {
  test('lists cohorts, with sync records on request', async () => {
    const plain = log.check('GET', await app.GET('/api/3/cohorts'));
    expect(plain.cohorts.length).toBeGreaterThan(0);
    expect(plain.cohorts[0]!.definition.countGroup?.name).toBe('User');
    const withSync = log.check(
      'GET',
      await app.GET('/api/3/cohorts', { params: { query: { includeSyncInfo: true } }, headers: { Prefer: 'example=withSyncInfo' } }),
    );
    expect(withSync.cohorts[0]!.syncMetadata?.map((s) => s.frequency)).toEqual(['hourly', 'daily']);
  });

  test('exports a cohort: request, poll, download from the body, parse', async () => {
    const result = await exportCohort(app, '4k2x9pq', { props: true, propKeys: ['city', 'gp:plan'], sleep: noWait });
    expect(result).toMatchObject({ requestId: '7d2a6c1e-5b1f-4f8a-9a43-2c0de8b7f0a1', cohortId: '4k2x9pq', polls: 1, redirected: false });
    expect(result.propertyColumns).toEqual(['city', 'gp:plan']);
    expect(result.members[1]).toEqual({ svc_id: '510384112467', user_id: 'lee-2207', properties: { city: 'Portland, OR', 'gp:plan': 'free' } });
    expect(result.members[2]!.user_id).toBeNull();
  });

  test('checks each export step, the running job and the redirect answer', async () => {
    const requested = log.check('GET', await app.GET('/api/5/cohorts/request/{id}', { params: { path: { id: '4k2x9pq' }, query: { props: 0 } } }));
    const path = { request_id: requested.request_id };
    const running = log.check('GET', await app.GET('/api/5/cohorts/request-status/{request_id}', { params: { path }, headers: { Prefer: 'code=202' } }));
    expect(running.async_status).toBe('JOB INPROGRESS');
    const done = await app.GET('/api/5/cohorts/request-status/{request_id}', { params: { path } });
    expect(done.response.status).toBe(200);
    expect(log.check('GET', done).async_status).toBe('JOB COMPLETED');
    const file = await app.GET('/api/5/cohorts/request/{request_id}/file', { params: { path }, parseAs: 'text' });
    expect(log.check('GET', file).split('\n')[0]).toBe('svc_id,user_id,city,gp:plan');
    const moved = await app.GET('/api/5/cohorts/request/{request_id}/file', {
      params: { path },
      parseAs: 'text',
      redirect: 'manual',
      headers: { Prefer: 'code=302' },
    });
    expect(moved.response.status).toBe(302);
    expect(moved.response.headers.get('location')).toMatch(/^https:\/\/svc-cohort-exports\.s3\.amazonaws\.com\//);
    // The signed link a self-hosted server hands out instead of an object-store URL.
    const link = await app.GET('/api/5/cohorts/downloads/{request_id}', { params: { path, query: { expires: 1795432860, signature: 'ab'.repeat(32) } }, parseAs: 'text' });
    expect(log.check('GET', link).split('\n')[0]).toBe('svc_id,user_id,city,gp:plan');
  });

  test('exportCohort follows the 302 to the object-store link without credentials', async () => {
    // The mock answers the file operation with its 302 example; the object store is faked.
    const preferRedirect: typeof fetch = (input, init) => {
      const request = new Request(input, init);
      if (request.url.endsWith('/file')) request.headers.set('Prefer', 'code=302');
      return fetch(request);
    };
    const fetched: Request[] = [];
    const objectStore: typeof fetch = async (input, init) => {
      fetched.push(new Request(input, init));
      return new Response('svc_id,user_id\n498120377310,ana-1001\n', { headers: { 'Content-Type': 'text/csv' } });
    };
    const result = await exportCohort(mockAppClient({ fetch: preferRedirect }), '4k2x9pq', { sleep: noWait, fetch: objectStore });
    expect(result.redirected).toBe(true);
    expect(result.members).toEqual([{ svc_id: '498120377310', user_id: 'ana-1001', properties: {} }]);
    expect(fetched.map((r) => [new URL(r.url).host, r.headers.get('authorization')])).toEqual([['svc-cohort-exports.s3.amazonaws.com', null]]);
  });

  test('uploads a cohort and changes its members, raw and through the helpers', async () => {
    const uploaded = log.check('POST', await app.POST('/api/3/cohorts/upload', { body: { ...upload, ids: [...upload.ids], skip_save: true, skip_invalid_ids: false } }));
    expect(uploaded.metadata.totals).toBeGreaterThan(0);
    const changed = log.check(
      'POST',
      await app.POST('/api/3/cohorts/membership', { body: { ...membership, memberships: [{ ...membership.memberships[0], ids: ['498120377310'] }] } }),
    );
    expect(changed.memberships_result.length).toBeGreaterThan(0);

    const summary = await uploadCohort(app, upload);
    expect(summary).toMatchObject({ cohortId: '2q8w4er', requests: 1, idsApplied: 2, failure: null });
    const update = await updateCohortMembership(app, '2q8w4er', [{ ids: ['498120377310'], id_type: 'BY_ID', operation: 'ADD' }], {
      count_group: 'User',
    });
    expect(update).toMatchObject({ cohortId: '2q8w4er', requests: 1, failure: null });
  });

  test('every cohorts operation was driven and checked', () => {
    expect([...log.driven].sort()).toEqual([...bundle('cohorts').operations].sort());
  });
});

const cases: ForbiddenCase[] = [
  {
    name: 'upload without owner',
    role: 'app',
    request: json('/api/3/cohorts/upload', { name: 'n', app_id: 187520, id_type: 'BY_USER_ID', ids: ['ana'], published: true }, { authorization: BASIC }),
    prismStatus: 400,
    problem: /body: \/ must have required property 'owner'/,
  },
  {
    name: 'upload with an id_type carrying the platform name',
    role: 'app',
    request: json('/api/3/cohorts/upload', { ...upload, id_type: 'BY_PLATFORM_ID' }, { authorization: BASIC }),
    prismStatus: 400,
    problem: /body: \/id_type must be equal to one of the allowed values/,
  },
  {
    name: 'upload whose owner is not an e-mail address',
    role: 'app',
    request: json('/api/3/cohorts/upload', { ...upload, owner: 'ana' }, { authorization: BASIC }),
    prismStatus: 400,
    problem: /body: \/owner must match format "email"/,
  },
  {
    name: 'upload of 100,001 IDs',
    role: 'app',
    request: json('/api/3/cohorts/upload', { ...upload, ids: Array.from({ length: 100_001 }, (_, i) => `u${i}`) }, { authorization: BASIC }),
    prismStatus: 400,
    problem: /body: \/ids must NOT have more than 100000 items/,
  },
  {
    name: 'membership with operation UPSERT',
    role: 'app',
    request: json('/api/3/cohorts/membership', { ...membership, memberships: [{ ...membership.memberships[0], operation: 'UPSERT' }] }, { authorization: BASIC }),
    prismStatus: 400,
    problem: /body: \/memberships\/0\/operation must be equal to one of the allowed values/,
  },
  {
    name: 'membership without entries',
    role: 'app',
    request: json('/api/3/cohorts/membership', { cohort_id: '2q8w4er', memberships: [] }, { authorization: BASIC }),
    prismStatus: 400,
    problem: /body: \/memberships must NOT have fewer than 1 items/,
  },
  {
    name: 'cohort listing without credentials',
    role: 'app',
    request: get('/api/3/cohorts'),
    prismStatus: 401,
    problem: /credentials: none of the security requirements is met \(BasicAuth\)/,
  },
  {
    name: 'upload without credentials',
    role: 'app',
    request: json('/api/3/cohorts/upload', upload),
    prismStatus: 401,
    problem: /credentials: none of the security requirements is met \(BasicAuth\)/,
  },
];

forbiddenRequests(cases);

forbiddenRequests([
  {
    name: 'export request with props=2',
    role: 'app',
    request: get('/api/5/cohorts/request/4k2x9pq?props=2', { authorization: BASIC }),
    prismStatus: 400,
    problem: /query parameter props: \/ must be equal to one of the allowed values/,
  },
  {
    name: 'status poll without credentials',
    role: 'app',
    request: get('/api/5/cohorts/request-status/7d2a6c1e-5b1f-4f8a-9a43-2c0de8b7f0a1'),
    prismStatus: 401,
    problem: /credentials: none of the security requirements is met \(BasicAuth\)/,
  },
]);

const valid: ValidCase[] = [
  { name: 'upload', role: 'app', request: json('/api/3/cohorts/upload', upload, { authorization: BASIC }), status: 200 },
  { name: 'membership', role: 'app', request: json('/api/3/cohorts/membership', membership, { authorization: BASIC }), status: 200 },
  { name: 'cohort listing', role: 'app', request: get('/api/3/cohorts?includeSyncInfo=true', { authorization: BASIC }), status: 200 },
];

validRequests(valid);

validRequests([
  {
    name: 'export request with chosen user properties',
    role: 'app',
    request: get('/api/5/cohorts/request/4k2x9pq?props=1&propKeys=city&propKeys=gp%3Aplan', { authorization: BASIC }),
    status: 202,
  },
  { name: 'status poll', role: 'app', request: get('/api/5/cohorts/request-status/7d2a6c1e-5b1f-4f8a-9a43-2c0de8b7f0a1', { authorization: BASIC }), status: 200 },
]);
