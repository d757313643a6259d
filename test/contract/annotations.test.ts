// Doc 000 annotations and their categories: the typed client against the Prism mock (every
// answer checked against the spec), then requests the spec forbids and their controls.
import { describe, expect, test } from 'vitest';
import { mockAppClient, operationLog } from './support/client-calls.js';
import { BASIC, type ForbiddenCase, type ValidCase, forbiddenRequests, get, json, validRequests } from './support/mock-requests.js';
import { bundle } from '@svc/openapi-validation';

const log = operationLog();
const app = mockAppClient();
const category = { params: { path: { category_id: 12 } } };
const annotation = { params: { path: { annotation_id: 3094 } } };
const newAnnotation = { label: 'Release 4.2', start: '2026-11-18T14:00Z', end: '2026-11-18T18:00+01:00', chart_id: 'e5r6t7y', category: 'Releases', details: 'Rolled out' };

describe('typed client against the mock', () => {
  test('annotation categories: create, list, get, rename, assign, delete', async () => {
    expect(log.check('POST', await app.POST('/api/3/annotation-categories', { body: { category: 'Releases' } })).data).toEqual({ id: 12, name: 'Releases' });
    const listed = log.check('GET', await app.GET('/api/3/annotation-categories', { params: { query: { category: 'Releases' } } }));
    expect(listed.data.map((c) => c.name)).toContain('Releases');
    expect(log.check('GET', await app.GET('/api/3/annotation-categories/{category_id}', category)).data.name).toBe('Releases');
    const renamed = log.check('PUT', await app.PUT('/api/3/annotation-categories/{category_id}', { ...category, body: { category: 'Product releases' } }));
    expect(renamed.data).toEqual({ id: 12, category: 'Product releases' });
    const assigned = log.check(
      'PUT',
      await app.PUT('/api/3/annotation-categories/bulk/{category_id}', { ...category, body: { annotation_ids: [3081, 3094] } }),
    );
    expect(assigned.data.map((a) => a.category)).toEqual([
      { id: 12, category: 'Releases' },
      { id: 12, category: 'Releases' },
    ]);
    expect(log.check('DELETE', await app.DELETE('/api/3/annotation-categories/{category_id}', category))).toEqual({ success: true });
  });

  test('annotations: create, list with filters, get, partial update, delete', async () => {
    const created = log.check('POST', await app.POST('/api/3/annotations', { body: newAnnotation }));
    expect(created.data.category).toEqual({ id: 13, name: 'Marketing campaigns' });
    const filtered = await app.GET('/api/3/annotations', { params: { query: { chart_id: 'e5r6t7y', start: '2026-11-01T00:00Z', end: '2026-12-01T00:00Z' } } });
    expect(new URL(filtered.response.url).search).toBe('?chart_id=e5r6t7y&start=2026-11-01T00%3A00Z&end=2026-12-01T00%3A00Z');
    expect(log.check('GET', filtered).data.some((a) => a.chart_id === null)).toBe(true);
    expect(log.check('GET', await app.GET('/api/3/annotations/{annotation_id}', annotation)).data.id).toBe(3094);
    const updated = log.check('PUT', await app.PUT('/api/3/annotations/{annotation_id}', { ...annotation, body: { chart_id: null, end: null } }));
    expect([updated.data.chart_id, updated.data.end]).toEqual([null, null]);
    expect(log.check('DELETE', await app.DELETE('/api/3/annotations/{annotation_id}', annotation))).toEqual({ success: true });
  });

  test('every annotations operation was driven and checked', () => {
    expect([...log.driven].sort()).toEqual([...bundle('annotations').operations].sort());
  });
});

const cases: ForbiddenCase[] = [
  {
    name: 'annotation with start written without T and zone',
    role: 'app',
    request: json('/api/3/annotations', { label: 'Release', start: '2026-11-18 14:00' }, { authorization: BASIC }),
    prismStatus: 400,
    problem: /body: \/start must match pattern/,
  },
  {
    name: 'annotation without label',
    role: 'app',
    request: json('/api/3/annotations', { start: '2026-11-18T14:00Z' }, { authorization: BASIC }),
    prismStatus: 400,
    problem: /body: \/ must have required property 'label'/,
  },
  {
    name: 'annotation listing with a date-only end filter',
    role: 'app',
    request: get('/api/3/annotations?end=2026-12-01', { authorization: BASIC }),
    prismStatus: 400,
    problem: /query parameter end: \/ must match pattern/,
  },
  {
    name: 'category named under name instead of category',
    role: 'app',
    request: json('/api/3/annotation-categories', { name: 'Releases' }, { authorization: BASIC }),
    prismStatus: 400,
    problem: /body: \/ must have required property 'category'/,
  },
  {
    name: 'annotation without credentials',
    role: 'app',
    request: json('/api/3/annotations', { label: 'Release', start: '2026-11-18T14:00Z' }),
    prismStatus: 401,
    problem: /credentials: none of the security requirements is met \(BasicAuth\)/,
  },
  {
    name: 'category listing with credentials that are not Basic base64(key:secret)',
    role: 'app',
    request: get('/api/3/annotation-categories', { authorization: 'Bearer abc' }),
    prismStatus: 401,
    problem: /credentials: none of the security requirements is met \(BasicAuth\)/,
  },
];

forbiddenRequests(cases);

const templatedCases: ForbiddenCase[] = [
  {
    role: 'app',
    name: 'update that removes start (start: null)',
    request: { ...json('/api/3/annotations/3094', { start: null }, { authorization: BASIC }), method: 'PUT' },
    prismStatus: 400,
    problem: /body: \/start must be string/,
  },
  {
    role: 'app',
    name: 'empty partial update',
    request: { ...json('/api/3/annotations/3094', {}, { authorization: BASIC }), method: 'PUT' },
    prismStatus: 400,
    problem: /body: \/ must NOT have fewer than 1 properties/,
  },
  {
    role: 'app',
    name: 'category ID that is not an integer',
    request: get('/api/3/annotation-categories/releases', { authorization: BASIC }),
    prismStatus: 400,
    problem: /path parameter category_id: \/ must be integer/,
  },
  {
    role: 'app',
    name: 'bulk assignment without annotation IDs',
    request: { ...json('/api/3/annotation-categories/bulk/12', { annotation_ids: [] }, { authorization: BASIC }), method: 'PUT' },
    prismStatus: 400,
    problem: /body: \/annotation_ids must NOT have fewer than 1 items/,
  },
  {
    role: 'app',
    name: 'annotation deletion without credentials',
    request: { method: 'DELETE', url: '/api/3/annotations/3094' },
    prismStatus: 401,
    problem: /credentials: none of the security requirements is met \(BasicAuth\)/,
  },
];

forbiddenRequests(templatedCases);

const valid: ValidCase[] = [
  { name: 'annotation', role: 'app', request: json('/api/3/annotations', newAnnotation, { authorization: BASIC }), status: 200 },
  { name: 'annotation listing', role: 'app', request: get('/api/3/annotations?category=Releases&end=2026-12-01T00:00-05:00', { authorization: BASIC }), status: 200 },
  { name: 'category', role: 'app', request: json('/api/3/annotation-categories', { category: 'Releases' }, { authorization: BASIC }), status: 200 },
];

validRequests(valid);

validRequests([
  {
    name: 'partial update with nulls',
    role: 'app',
    request: { ...json('/api/3/annotations/3094', { end: null, chart_id: null, details: null }, { authorization: BASIC }), method: 'PUT' },
    status: 200,
  },
  {
    name: 'bulk assignment',
    role: 'app',
    request: { ...json('/api/3/annotation-categories/bulk/12', { annotation_ids: [3081] }, { authorization: BASIC }), method: 'PUT' },
    status: 200,
  },
  { name: 'category lookup', role: 'app', request: get('/api/3/annotation-categories/12', { authorization: BASIC }), status: 200 },
]);
