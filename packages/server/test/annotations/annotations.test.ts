// Annotations and their categories through the Prism proxy: every documented status, the
// `category` vs `name` keys, partial updates with nulls, the list filters, tenant isolation.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';
import { send } from '../support/http.js';

let h: Harness;
const basic = (project: { api_key: string; secret_key: string }) => ({ authorization: `Basic ${Buffer.from(`${project.api_key}:${project.secret_key}`).toString('base64')}` });
beforeAll(async () => {
  h = await startHarness(['app']);
});
afterAll(() => h?.close());

const call = (method: string, path: string, body?: unknown, project = h.project) =>
  send(`${h.proxied.app}${path}`, { method, headers: { ...basic(project), ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });

test('categories: create, 409 on a taken name, list and filter, rename answers with `category`, delete keeps annotations', async () => {
  const releases = await call('POST', '/api/3/annotation-categories', { category: 'Releases' });
  expect(releases.body).toEqual({ data: { id: expect.any(Number), name: 'Releases' } });
  expect((await call('POST', '/api/3/annotation-categories', { category: 'Releases' })).status).toBe(409);
  const alerts = (await call('POST', '/api/3/annotation-categories', { category: 'Alerts' })).body.data;
  expect((await call('GET', '/api/3/annotation-categories')).body.data.map((c: { name: string }) => c.name)).toEqual(['Releases', 'Alerts']);
  expect((await call('GET', '/api/3/annotation-categories?category=Alerts')).body.data).toEqual([alerts]);
  expect((await call('GET', '/api/3/annotation-categories?category=Nope')).status).toBe(404);
  expect((await call('PUT', `/api/3/annotation-categories/${alerts.id}`, { category: 'Releases' })).status).toBe(409);
  expect((await call('PUT', `/api/3/annotation-categories/${alerts.id}`, { category: 'Incidents' })).body).toEqual({ data: { id: alerts.id, category: 'Incidents' } });
  expect((await call('GET', `/api/3/annotation-categories/${alerts.id}`)).body.data).toEqual({ id: alerts.id, name: 'Incidents' });
  expect((await call('GET', `/api/3/annotation-categories/${alerts.id}`, undefined, h.otherProject)).status).toBe(404);
  const noted = (await call('POST', '/api/3/annotations', { label: 'Outage', start: '2026-11-02T10:00Z', category: 'Incidents' })).body.data;
  expect((await call('DELETE', `/api/3/annotation-categories/${alerts.id}`)).body).toEqual({ success: true });
  expect((await call('DELETE', `/api/3/annotation-categories/${alerts.id}`)).status).toBe(404);
  expect((await call('GET', `/api/3/annotations/${noted.id}`)).body.data.category).toBeNull();
});

test('annotations: global or per chart, partial updates with nulls, bulk category assignment, filters', async () => {
  const launch = (await call('POST', '/api/3/annotations', { label: 'Launch', start: '2026-11-10T09:00+01:00', end: '2026-11-12T09:00+01:00', chart_id: 'abc123', details: 'v2' })).body.data;
  expect(launch).toMatchObject({ label: 'Launch', start: '2026-11-10T09:00+01:00', end: '2026-11-12T09:00+01:00', chart_id: 'abc123', details: 'v2', category: null });
  expect((await call('POST', '/api/3/annotations', { label: 'Backwards', start: '2026-11-10T09:00Z', end: '2026-11-09T09:00Z' })).status).toBe(400);
  expect((await call('POST', '/api/3/annotations', { label: 'Unknown', start: '2026-11-10T09:00Z', category: 'Nope' })).status).toBe(404);
  const updated = await call('PUT', `/api/3/annotations/${launch.id}`, { chart_id: null, end: null, details: null });
  expect(updated.body.data).toMatchObject({ label: 'Launch', end: null, chart_id: null, details: null });
  expect((await call('PUT', `/api/3/annotations/${launch.id}`, {})).status).toBe(400);
  const releases = (await call('GET', '/api/3/annotation-categories?category=Releases')).body.data[0];
  const assigned = await call('PUT', `/api/3/annotation-categories/bulk/${releases.id}`, { annotation_ids: [launch.id] });
  expect(assigned.body.data[0].category).toEqual({ id: releases.id, category: 'Releases' });
  expect((await call('PUT', `/api/3/annotation-categories/bulk/${releases.id}`, { annotation_ids: [launch.id, 999_999] })).status).toBe(400);
  const list = async (query: string) => (await call('GET', `/api/3/annotations${query}`)).body.data.map((a: { label: string }) => a.label);
  expect(await list('?category=Releases')).toEqual(['Launch']);
  expect(await list('?start=2026-11-05T00:00Z')).toEqual(['Launch']);
  expect(await list('?end=2026-11-05T00:00Z')).toEqual(['Outage']);
  expect((await call('GET', '/api/3/annotations?category=Releases&chart_id=abc123')).status).toBe(409);
  expect((await call('GET', '/api/3/annotations', undefined, h.otherProject)).body.data).toEqual([]);
  expect((await call('DELETE', `/api/3/annotations/${launch.id}`)).body).toEqual({ success: true });
  expect((await call('GET', `/api/3/annotations/${launch.id}`)).status).toBe(404);
});

test('ids past what a JSON number carries exactly are 400 saying so, in the path and in a bulk body, never a 5xx', async () => {
  const huge = ['47529382375175741243392', '29673815197048395341369752682496', '9223372036854775808', '9007199254740992'];
  for (const id of huge) {
    for (const [method, path, body] of [
      ['PUT', `/api/3/annotations/${id}`, { label: 'x' }],
      ['GET', `/api/3/annotations/${id}`, undefined],
      ['DELETE', `/api/3/annotations/${id}`, undefined],
      ['GET', `/api/3/annotation-categories/${id}`, undefined],
      ['PUT', `/api/3/annotation-categories/${id}`, { category: 'x' }],
      ['PUT', `/api/3/annotation-categories/bulk/${id}`, { annotation_ids: [1] }],
    ] as const) {
      const answer = await call(method, path, body);
      expect(answer.status, `${method} ${path}`).toBe(400);
      expect(answer.body.error, `${method} ${path}`).toMatch(/must pass "int64" format|format/);
    }
  }
  const category = (await call('POST', '/api/3/annotation-categories', { category: 'Bulk huge' })).body.data;
  const bulk = await call('PUT', `/api/3/annotation-categories/bulk/${category.id}`, { annotation_ids: [Number(huge[0])] });
  expect(bulk.status).toBe(400);
});
