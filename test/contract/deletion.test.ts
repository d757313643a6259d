// User deletion: the typed app client and `deleteUsers` against the mock of the application
// host role, then the requests the spec forbids and their valid controls.
import { createAppClient, deleteUsers, type UserIdentifier } from '@svc/client';
import { describe, expect, inject, test } from 'vitest';
import { acceptedByPrism, expectValid } from './support/client-checks.js';
import {
  API_KEY,
  BASIC,
  type ForbiddenCase,
  type ValidCase,
  expectDocumentedBody,
  forbiddenRequests,
  get,
  json,
  query,
  send,
  validRequests,
} from './support/mock-requests.js';
import { validateRequest } from '@svc/openapi-validation';

const app = (fetch?: typeof globalThis.fetch) =>
  createAppClient({ baseUrl: inject('mockUrls').app!, apiKey: API_KEY, secretKey: 'secret-key-0123', ...(fetch ? { fetch } : {}) });
const ids = (count: number, prefix = 'user') => Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
const jobPath = '/api/2/deletions/users/{svc_id}/{day}';

describe('typed app client against the mock', () => {
  const client = app(acceptedByPrism());

  test('createDeletionRequest: POST /api/2/deletions/users', async () => {
    const { data, response } = await client.POST('/api/2/deletions/users', {
      body: { svc_ids: [510384112467], user_ids: ['dana-3391'], requester: 'privacy-team@example.com', ignore_invalid_ids: true, include_mapped_user_ids: true },
    });
    expect(response.status).toBe(200);
    expectDocumentedBody('POST', '/api/2/deletions/users', 200, data);
  });

  test('listDeletionJobs: GET /api/2/deletions/users', async () => {
    const { data, response } = await client.GET('/api/2/deletions/users', { params: { query: { start_day: '2026-11-01', end_day: '2026-12-31' } } });
    expect(response.status).toBe(200);
    expect(Array.isArray(data)).toBe(true);
    expectDocumentedBody('GET', '/api/2/deletions/users', 200, data);
  });

  test('deleteDeletionJobEntry: DELETE /api/2/deletions/users/{svc_id}/{day}', async () => {
    const { data, response } = await client.DELETE(jobPath, { params: { path: { svc_id: 510384112467, day: '2026-12-21' } } });
    expect(response.status).toBe(200);
    expect(new URL(response.url).pathname).toBe('/api/2/deletions/users/510384112467/2026-12-21');
    expectDocumentedBody('DELETE', jobPath, 200, data);
  });

  test('deleteUsers sends 150 IDs as two valid requests of at most 100 and returns the documented jobs', async () => {
    const mixed: UserIdentifier[] = [...ids(75), ...Array.from({ length: 75 }, (_, i) => 510384112000 + i)];
    const summary = await deleteUsers(client, mixed, { fields: { requester: 'dpo@example.com' } });
    expect(summary.failures).toEqual([]);
    expect(summary.requests).toBe(2);
    expect(summary.jobs.length).toBeGreaterThanOrEqual(2);
    for (const job of summary.jobs) expectValid('deletion', { $ref: '#/components/schemas/DeletionJob' }, job);
  });
});

const body = { user_ids: ['dana-3391'], requester: 'privacy-team@example.com' };
const auth = { authorization: BASIC };

const cases: ForbiddenCase[] = [
  {
    name: 'deletion request with 101 user IDs',
    role: 'app',
    request: json('/api/2/deletions/users', { user_ids: ids(101) }, auth),
    prismStatus: 400,
    problem: /body: \/user_ids must NOT have more than 100 items/,
  },
  {
    name: 'deletion request with 101 service IDs',
    role: 'app',
    request: json('/api/2/deletions/users', { svc_ids: Array.from({ length: 101 }, (_, i) => i + 1) }, auth),
    prismStatus: 400,
    problem: /body: \/svc_ids must NOT have more than 100 items/,
  },
  {
    name: 'deletion request without any ID',
    role: 'app',
    request: json('/api/2/deletions/users', { requester: 'dpo@example.com', ignore_invalid_ids: true }, auth),
    prismStatus: 400,
    problem: /must match a schema in anyOf/,
  },
  {
    name: "deletion request with ignore_invalid_ids 'yes'",
    role: 'app',
    request: json('/api/2/deletions/users', { ...body, ignore_invalid_ids: 'yes' }, auth),
    prismStatus: 400,
    problem: /\/ignore_invalid_ids must be boolean/,
  },
  {
    name: 'deletion request without credentials',
    role: 'app',
    request: json('/api/2/deletions/users', body),
    prismStatus: 401,
    problem: /credentials: none of the security requirements is met \(BasicAuth\)/,
  },
  {
    name: 'job listing without end_day',
    role: 'app',
    request: get(`/api/2/deletions/users?${query({ start_day: '2026-11-01' })}`, auth),
    prismStatus: 400,
    problem: /query parameter end_day: is required/,
  },
  {
    name: 'job listing with a day not written YYYY-MM-DD',
    role: 'app',
    request: get(`/api/2/deletions/users?${query({ start_day: '20261101', end_day: '2026-12-31' })}`, auth),
    prismStatus: 400,
    problem: /query parameter start_day: .*must match/,
  },
  {
    name: 'job listing without credentials',
    role: 'app',
    request: get(`/api/2/deletions/users?${query({ start_day: '2026-11-01', end_day: '2026-12-31' })}`),
    prismStatus: 401,
    problem: /credentials: none of the security requirements is met \(BasicAuth\)/,
  },
  {
    name: 'job entry removal with a day not written YYYY-MM-DD',
    role: 'app',
    request: { method: 'DELETE', url: '/api/2/deletions/users/510384112467/20261221', headers: auth },
    prismStatus: 400,
    problem: /path parameter day: .*must match/,
  },
  {
    name: 'job entry removal without credentials',
    role: 'app',
    request: { method: 'DELETE', url: '/api/2/deletions/users/510384112467/2026-12-21' },
    prismStatus: 401,
    problem: /credentials: none of the security requirements is met \(BasicAuth\)/,
  },
];

forbiddenRequests(cases);

describe('limits the description cannot express', () => {
  // JSON Schema cannot add the lengths of two arrays: 60 service IDs and 41 user IDs (101 IDs)
  // pass both Prism and the spec validator; the service answers 400 (described in words) and
  // deleteUsers never sends more than 100 IDs in total (unit-tested in packages/client).
  test('a deletion request of 60 service IDs and 41 user IDs passes Prism and the validator (PRISM_GAPS.md)', async () => {
    const request = json('/api/2/deletions/users', { svc_ids: Array.from({ length: 60 }, (_, i) => i + 1), user_ids: ids(41) }, auth);
    expect(validateRequest(request).valid).toBe(true);
    expect((await send('app', request)).status).toBe(200);
  });
});

const valid: ValidCase[] = [
  { name: 'deletion request (mixed IDs)', role: 'app', request: json('/api/2/deletions/users', { svc_ids: [510384112467], ...body }, auth), status: 200 },
  {
    name: 'deletion request spelling ignore_invalid_id',
    role: 'app',
    request: json('/api/2/deletions/users', { ...body, ignore_invalid_id: true, delete_from_org: true }, auth),
    status: 200,
  },
  { name: 'deletion request with 100 user IDs', role: 'app', request: json('/api/2/deletions/users', { user_ids: ids(100) }, auth), status: 200 },
  {
    name: 'job listing',
    role: 'app',
    request: get(`/api/2/deletions/users?${query({ start_day: '2026-11-01', end_day: '2026-12-31' })}`, auth),
    status: 200,
  },
  { name: 'job entry removal', role: 'app', request: { method: 'DELETE', url: '/api/2/deletions/users/510384112467/2026-12-21', headers: auth }, status: 200 },
];

validRequests(valid);
