// Taxonomy through the Prism proxy: the entitlement (403 without), event categories
// (create, 409 on a taken name, list, get by name, rename, delete), bad input, tenant
// isolation, and the hourly cost limit (429 with Retry-After).
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { IssuedProject as Project } from '../../src/shared/tenancy.js';
import { type Harness, startHarness } from '../support/harness.js';
import { send } from '../support/http.js';

let h: Harness;
const COST_PER_HOUR = 40;

beforeAll(async () => {
  h = await startHarness(['app'], { taxonomyLimits: { concurrentCost: 4, costPerHour: COST_PER_HOUR } });
});
afterAll(() => h?.close());

const call = (method: string, path: string, form?: Record<string, string>, project: Project = h.project) =>
  send(`${h.proxied.app}/api/2/taxonomy${path}`, {
    method,
    headers: { authorization: `Basic ${Buffer.from(`${project.api_key}:${project.secret_key}`).toString('base64')}`, ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    ...(form ? { body: new URLSearchParams(form).toString() } : {}),
  });

test('a project without the taxonomy entitlement gets 403', async () => {
  const refused = await call('GET', '/category');
  expect(refused.status).toBe(403);
  expect(refused.body).toEqual({ success: false, errors: [{ message: 'Taxonomy is available to Enterprise projects only' }] });
  // Prism answers a request without credentials itself: the server's own answer is read directly.
  expect(await send(`${h.direct}/api/2/taxonomy/category`)).toMatchObject({ status: 401, body: { success: false } });
});

test('event categories: create, 409 on a taken name, list, get by name, rename, delete', async () => {
  h.server.tenancy.grantTaxonomy(h.project.app_id);
  h.server.tenancy.grantTaxonomy(h.otherProject.app_id);
  expect((await call('POST', '/category', { category_name: 'Checkout' })).body).toEqual({ success: true });
  expect((await call('POST', '/category', { category_name: 'Search' })).status).toBe(200);
  const taken = await call('POST', '/category', { category_name: 'Checkout' });
  expect(taken.status).toBe(409);
  expect(taken.body.errors[0].message).toBe("Category 'Checkout' already exists");
  const listed = await call('GET', '/category');
  expect(listed.body.data.map((c: { name: string }) => c.name)).toEqual(['Checkout', 'Search']);
  const [checkout, search] = listed.body.data as { id: number; name: string }[];
  expect((await call('GET', '/category/Checkout')).body).toEqual({ success: true, data: checkout });
  expect((await call('GET', '/category/Nope')).status).toBe(400);

  expect((await call('PUT', `/category/${checkout!.id}`, { category_name: 'Purchase' })).status).toBe(200);
  expect((await call('PUT', `/category/${checkout!.id}`, { category_name: 'Search' })).status).toBe(409);
  expect((await call('PUT', '/category/999999', { category_name: 'Other' })).status).toBe(409);
  expect((await call('GET', '/category/Purchase')).body.data).toEqual({ id: checkout!.id, name: 'Purchase' });
  expect((await call('DELETE', `/category/${search!.id}`)).status).toBe(200);
  expect((await call('DELETE', `/category/${search!.id}`)).status).toBe(409);
  expect((await call('GET', '/category')).body.data).toEqual([{ id: checkout!.id, name: 'Purchase' }]);

  const missing = await call('POST', '/category', {});
  expect(missing.status).toBe(400);
  expect(missing.body.success).toBe(false);
});

test('a category id past what a JSON number carries exactly is 400, never a 5xx', async () => {
  h.server.tenancy.grantTaxonomy(h.project.app_id);
  for (const id of ['18720367733235632832512', '9223372036854775808']) {
    for (const method of ['PUT', 'DELETE']) {
      const answer = await call(method, `/category/${id}`, method === 'PUT' ? { category_name: 'Other' } : undefined);
      expect(answer.status, `${method} ${id}`).toBe(400);
      expect(answer.body.success).toBe(false);
    }
  }
});

test('text holding a NUL is 400 on both engines (PostgreSQL cannot store it); names of 2000 characters are data, no 414', async () => {
  h.server.tenancy.grantTaxonomy(h.project.app_id);
  for (const path of ['/event-property', '/user-property']) {
    const form: Record<string, string> = path === '/event-property' ? { event_property: 'a\u0000b', is_hidden: 'false' } : { user_property: 'a\u0000b' };
    const answer = await call('POST', path, form);
    expect(answer.status, path).toBe(400);
    if (path === '/event-property') expect(answer.body.errors[0].message).toMatch(/U\+0000/);
  }
  expect((await call('GET', `/event-property/${encodeURIComponent('a\u0000b')}`)).status).toBe(400);
  expect((await call('DELETE', '/event/%00')).status).toBe(400);
  expect((await call('POST', '/event/%00/restore')).status).toBe(400);
  // Longer than Fastify's default path parameter (100 characters), which answered 414: an unknown property, 400 as the platform answers.
  expect((await call('GET', `/event-property/${'p'.repeat(2_000)}`)).status).toBe(400);
});

test('a key never reaches another project’s categories', async () => {
  const theirs = (await call('GET', '/category')).body.data as { id: number }[];
  expect((await call('GET', '/category', undefined, h.otherProject)).body.data).toEqual([]);
  expect((await call('DELETE', `/category/${theirs[0]!.id}`, undefined, h.otherProject)).status).toBe(409);
  expect((await call('GET', '/category')).body.data).toEqual(theirs);
});

test('past the hourly cost the taxonomy answers 429 with Retry-After', async () => {
  let answer = await call('GET', '/category', undefined, h.otherProject);
  for (let i = 0; i < COST_PER_HOUR && answer.status === 200; i++) answer = await call('GET', '/category', undefined, h.otherProject);
  expect(answer.status).toBe(429);
  expect(answer.headers.get('retry-after')).toBe('3600');
  expect(answer.body.success).toBe(false);
});
