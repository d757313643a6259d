// The tracking plan over HTTP, every answer through the Prism proxy: event types (kinds from
// the plan and from ingested events, delete/restore by the states table, renames of ingested
// event types as transformations, the events list's flags), event properties (shared,
// overrides, own properties, the 409 cases), custom user properties; refused changes write
// nothing; one project's key never reaches another's plan.
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { IssuedProject as Project } from '../../src/shared/tenancy.js';
import { type Harness, startHarness } from '../support/harness.js';
import { postJson, send } from '../support/http.js';

let h: Harness;
// A minute ago, but today (UTC): the events list counts today's events.
const time = Math.max(Date.now() - 60_000, new Date().setUTCHours(0, 0, 0, 0));

beforeAll(async () => {
  h = await startHarness(['ingest', 'app']);
  h.server.tenancy.grantTaxonomy(h.project.app_id);
  h.server.tenancy.grantTaxonomy(h.otherProject.app_id);
  const events = [
    { event_type: 'Checkout Completed', user_id: 'user-1', time, event_properties: { cart_value: 12.5 } },
    { event_type: 'Viewed', user_id: 'user-1', time },
    { event_type: 'Search', user_id: 'user-2', time, event_properties: { query: 'shoes' } },
  ];
  expect((await postJson(`${h.proxied.ingest}/batch`, { api_key: h.project.api_key, events })).status).toBe(200);
  await h.server.store.flush();
});
afterAll(() => h?.close());

const authOf = (project: Project) => ({ authorization: `Basic ${Buffer.from(`${project.api_key}:${project.secret_key}`).toString('base64')}` });

function call(method: string, path: string, form?: Record<string, string>, project: Project = h.project) {
  return send(`${h.proxied.app}/api/2/taxonomy${path}`, {
    method,
    headers: { ...authOf(project), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    ...(form ? { body: new URLSearchParams(form).toString() } : {}),
  });
}

const names = async (query = '', project?: Project) => ((await call('GET', `/event${query}`, undefined, project)).body.data as { event_type: string }[]).map((t) => t.event_type);
const eventType = async (name: string) => (await call('GET', `/event/${encodeURIComponent(name)}`)).body.data;
const message = (answer: { body: { errors: { message: string }[] } }) => answer.body.errors[0]!.message;

test('ingested event types are listed unexpected with the defaults; planning one makes it live', async () => {
  expect(await names()).toEqual(['Checkout Completed', 'Search', 'Viewed']);
  expect(await eventType('Viewed')).toEqual({
    event_type: 'Viewed',
    category: null,
    description: null,
    display_name: null,
    is_active: true,
    is_hidden_from_dropdowns: false,
    is_hidden_from_persona_results: false,
    is_hidden_from_pathfinder: false,
    is_hidden_from_timeline: false,
    tags: [],
    owner: null,
  });
  expect((await call('POST', '/category', { category_name: 'Checkout Flow' })).status).toBe(200);
  const planned = await call('POST', '/event', { event_type: 'Checkout Completed', category: 'Checkout Flow', description: 'Paid', tags: 'checkout,revenue', owner: 'dana@example.com', is_hidden_from_pathfinder: 'true' });
  expect(planned.body).toEqual({ success: true });
  expect(await eventType('Checkout Completed')).toMatchObject({ category: { name: 'Checkout Flow' }, description: 'Paid', tags: ['checkout', 'revenue'], owner: 'dana@example.com', is_hidden_from_pathfinder: true });
  const again = await call('POST', '/event', { event_type: 'Checkout Completed' });
  expect(again.status).toBe(409);
  expect(message(again)).toBe("Event type 'Checkout Completed' already exists");
  expect((await call('GET', '/event/Nope')).status).toBe(400);
});

test('a planned event type: 409 for hidden flags and unknown categories, and nothing is written', async () => {
  expect((await call('POST', '/event', { event_type: 'Coupon Applied', description: 'A coupon' })).status).toBe(200);
  const hidden = await call('POST', '/event', { event_type: 'Gift Wrapped', is_hidden_from_timeline: 'false' });
  expect(hidden.status).toBe(409);
  expect(message(hidden)).toBe('is_hidden_from_timeline can only be set on ingested event types');
  const category = await call('POST', '/event', { event_type: 'Gift Wrapped', category: 'Nope' });
  expect(category.status).toBe(409);
  expect(message(category)).toBe("Category 'Nope' not found");
  expect(await names()).toEqual(['Checkout Completed', 'Coupon Applied', 'Search', 'Viewed']);

  const refused = await call('PUT', '/event/Coupon%20Applied', { description: 'Changed', is_hidden_from_dropdowns: 'true' });
  expect(refused.status).toBe(409);
  expect((await eventType('Coupon Applied')).description).toBe('A coupon');
  expect((await call('PUT', '/event/Nope', { description: 'x' })).status).toBe(409);
  const missing = await call('POST', '/event', { description: 'no name' });
  expect(missing.status).toBe(400);
  expect(missing.body.success).toBe(false);
});

test('delete and restore by kind: live, unexpected, planned', async () => {
  expect((await call('DELETE', '/event/Checkout%20Completed')).status).toBe(200);
  expect(await names()).not.toContain('Checkout Completed');
  expect(await names('?showDeleted=true')).toContain('Checkout Completed');
  expect(message(await call('DELETE', '/event/Checkout%20Completed'))).toBe("Event type 'Checkout Completed' is deleted or does not exist");
  expect((await call('PUT', '/event/Checkout%20Completed', { description: 'x' })).status).toBe(409);
  expect((await call('POST', '/event/Checkout%20Completed/restore')).status).toBe(200);
  expect(await eventType('Checkout Completed')).toMatchObject({ description: 'Paid', category: { name: 'Checkout Flow' } });
  expect(message(await call('POST', '/event/Checkout%20Completed/restore'))).toBe("Event type 'Checkout Completed' is not deleted or does not exist");

  // unexpected: added to the plan, then deleted; restored, it is live (planned again: 409)
  expect((await call('DELETE', '/event/Search')).status).toBe(200);
  expect(await names()).not.toContain('Search');
  expect((await call('POST', '/event/Search/restore')).status).toBe(200);
  expect((await call('POST', '/event', { event_type: 'Search' })).status).toBe(409);

  // planned: removed from the plan, not restorable
  expect((await call('DELETE', '/event/Coupon%20Applied')).status).toBe(200);
  expect(await names('?showDeleted=true')).not.toContain('Coupon Applied');
  expect((await call('POST', '/event/Coupon%20Applied/restore')).status).toBe(409);
  expect((await call('DELETE', '/event/Nope')).status).toBe(409);
});

test('renames: a planned event type is renamed; an ingested one becomes a transformation that cannot be deleted', async () => {
  expect((await call('POST', '/event', { event_type: 'Coupon Applied' })).status).toBe(200);
  expect((await call('PUT', '/event/Coupon%20Applied', { new_event_type: 'Coupon Used', display_name: 'Coupon' })).status).toBe(200);
  expect(await eventType('Coupon Used')).toMatchObject({ display_name: 'Coupon' });
  expect((await call('PUT', '/event/Coupon%20Used', { new_event_type: 'Search' })).status).toBe(409);

  expect((await call('PUT', '/event/Viewed', { new_event_type: 'Page Viewed', is_hidden_from_dropdowns: 'true' })).status).toBe(200);
  expect(await names()).toEqual(['Checkout Completed', 'Coupon Used', 'Page Viewed', 'Search']);
  expect((await call('GET', '/event/Viewed')).status).toBe(400);
  const transformed = await call('DELETE', '/event/Page%20Viewed');
  expect(transformed.status).toBe(409);
  expect(message(transformed)).toBe("Event type 'Page Viewed' is transformed: transformed event types cannot be deleted");
  expect((await call('POST', '/event', { event_type: 'Viewed' })).status).toBe(409);
});

test('the events list shows the plan’s display names and its hidden and deleted flags', async () => {
  expect((await call('DELETE', '/event/Search')).status).toBe(200);
  const list = await send(`${h.proxied.app}/api/2/events/list`, { headers: authOf(h.project) });
  expect(list.status).toBe(200);
  const byName = new Map((list.body.data as { value: string }[]).map((row) => [row.value, row]));
  expect(byName.get('Viewed')).toMatchObject({ display: 'Page Viewed', hidden: true, deleted: false, totals: 1 });
  expect(byName.get('Checkout Completed')).toMatchObject({ display: 'Checkout Completed', flow_hidden: true, hidden: false });
  expect(byName.get('Search')).toMatchObject({ deleted: true });
  expect((await call('POST', '/event/Search/restore')).status).toBe(200);
  // What reporting keeps of the plan follows the change at once.
  const after = await send(`${h.proxied.app}/api/2/events/list`, { headers: authOf(h.project) });
  expect((after.body.data as { value: string }[]).find((row) => row.value === 'Search')).toMatchObject({ deleted: false });
});

test('reporting selects the events of a renamed event type by its new name', async () => {
  const day = new Date(time).toISOString().slice(0, 10).replace(/-/g, '');
  const segmentation = (eventType: string) => send(`${h.proxied.app}/api/2/events/segmentation?start=${day}&end=${day}&m=totals&e=${encodeURIComponent(JSON.stringify({ event_type: eventType }))}`, { headers: authOf(h.project) });
  const renamed = await segmentation('Page Viewed');
  expect(renamed.status).toBe(200);
  expect(renamed.body.data.series).toEqual([[1]]);
  expect((await segmentation('Viewed')).body.data.series).toEqual([[1]]);
});

test('event properties: shared, overrides, own properties and the 409 cases', async () => {
  expect((await call('POST', '/event-property', { event_property: 'cart_value', type: 'number', classifications: 'REVENUE', description: 'Cart' })).status).toBe(200);
  expect(message(await call('POST', '/event-property', { event_property: 'cart_value' }))).toBe("Event property 'cart_value' already exists");
  const override = await call('POST', '/event-property', { event_property: 'cart_value', event_type: 'Checkout Completed', classifications: 'PII' });
  expect(override.status).toBe(409);
  expect(message(override)).toBe('classifications can only be set on shared event properties');
  expect((await call('POST', '/event-property', { event_property: 'cart_value', event_type: 'Checkout Completed', is_required: 'true' })).status).toBe(200);
  const own = { event_property: 'payment_method', event_type: 'Checkout Completed', type: 'enum', enum_values: 'card,paypal' };
  expect((await call('POST', '/event-property', own)).status).toBe(200);
  expect(message(await call('POST', '/event-property', own))).toBe("Event property 'payment_method' already exists on event type 'Checkout Completed'");
  expect(message(await call('POST', '/event-property', { event_property: 'x', event_type: 'Nope' }))).toBe("Event type 'Nope' is not in the schema");
  expect((await call('POST', '/event-property', { event_property: 'x', type: 'number', regex: '^a' })).status).toBe(409);
  expect((await call('POST', '/event-property', { event_property: 'x', type: 'string', regex: '(' })).status).toBe(400);
  expect((await call('POST', '/event-property', { event_property: 'x', classifications: 'SECRET' })).status).toBe(400);

  const ofType = await call('GET', '/event-property?event_type=Checkout%20Completed');
  expect(ofType.body.data).toEqual([
    { event_property: 'cart_value', event_type: 'Checkout Completed', description: '', type: 'any', regex: null, enum_values: null, is_array_type: false, is_required: true, is_hidden: false, classifications: [] },
    { event_property: 'payment_method', event_type: 'Checkout Completed', description: '', type: 'enum', regex: null, enum_values: 'card,paypal', is_array_type: false, is_required: false, is_hidden: false, classifications: [] },
  ]);
  expect((await call('GET', '/event-property')).body.data.map((p: { event_property: string }) => p.event_property)).toEqual(['cart_value']);
  expect((await call('GET', '/event-property?event_property=payment_method&event_type=Checkout%20Completed')).body.data).toHaveLength(1);
  expect((await call('GET', '/event-property?event_type=Nope')).status).toBe(400);
  expect((await call('GET', '/event-property/cart_value')).body.data).toMatchObject({ event_type: null, type: 'number', classifications: ['REVENUE'], description: 'Cart' });
  expect((await call('GET', '/event-property/payment_method')).status).toBe(400);
});

test('event property updates: is_hidden only when ingested, type changes, renames, deletes', async () => {
  const notIngested = await call('PUT', '/event-property/payment_method', { event_type: 'Checkout Completed', is_hidden: 'true' });
  expect(notIngested.status).toBe(409);
  expect((await call('PUT', '/event-property/cart_value', { event_type: 'Checkout Completed', is_hidden: 'true' })).status).toBe(200);
  expect((await call('PUT', '/event-property/payment_method', { event_type: 'Checkout Completed', type: 'string' })).status).toBe(200);
  expect((await call('GET', '/event-property/payment_method?event_type=Checkout%20Completed')).body.data).toMatchObject({ type: 'string', enum_values: null });
  expect((await call('PUT', '/event-property/payment_method', { event_type: 'Checkout Completed', enum_values: 'a,b' })).status).toBe(409);
  expect((await call('PUT', '/event-property/nope', { description: 'x' })).status).toBe(409);

  expect((await call('PUT', '/event-property/cart_value', { event_type: 'Checkout Completed', new_event_property: 'cart_total' })).status).toBe(409);
  expect((await call('PUT', '/event-property/cart_value', { new_event_property: 'cart_total' })).status).toBe(200);
  expect((await call('GET', '/event-property/cart_total?event_type=Checkout%20Completed')).body.data).toMatchObject({ is_hidden: true, is_required: true });

  expect((await call('DELETE', '/event-property/payment_method?event_type=Checkout%20Completed')).status).toBe(200);
  expect((await call('DELETE', '/event-property/payment_method?event_type=Checkout%20Completed')).status).toBe(409);
  expect((await call('DELETE', '/event-property/cart_total')).status).toBe(200);
  expect((await call('GET', '/event-property?event_type=Checkout%20Completed')).body.data).toEqual([]);
  expect((await call('DELETE', '/event-property/x?event_type=')).status).toBe(400);
});

test('custom user properties: gp: names, 409 on taken names, renames, deletes', async () => {
  const plan = { user_property: 'gp:plan', description: 'Plan', type: 'enum', enum_values: 'basic,pro', classifications: 'REVENUE' };
  expect((await call('POST', '/user-property', plan)).status).toBe(200);
  expect(message(await call('POST', '/user-property', plan))).toBe("User property 'gp:plan' already exists");
  expect((await call('POST', '/user-property', { user_property: 'plan' })).status).toBe(400);
  expect((await call('POST', '/user-property', { user_property: 'gp:interests', is_array_type: 'true' })).status).toBe(200);
  expect((await call('GET', '/user-property')).body.data).toEqual([
    { user_property: 'gp:interests', description: '', type: 'any', regex: null, enum_values: null, is_array_type: true, classifications: [] },
    { user_property: 'gp:plan', description: 'Plan', type: 'enum', regex: null, enum_values: 'basic,pro', is_array_type: false, classifications: ['REVENUE'] },
  ]);
  expect((await call('GET', '/user-property/gp%3Aplan')).body.data.enum_values).toBe('basic,pro');
  expect((await call('GET', '/user-property/gp%3Anope')).status).toBe(400);
  expect((await call('GET', '/user-property/plan')).status).toBe(400);
  expect((await call('PUT', '/user-property/gp%3Aplan', { new_user_property: 'gp:interests' })).status).toBe(409);
  expect((await call('PUT', '/user-property/gp%3Aplan', { new_user_property: 'gp:tier', enum_values: 'basic,pro,team' })).status).toBe(200);
  expect((await call('GET', '/user-property/gp%3Atier')).body.data.enum_values).toBe('basic,pro,team');
  expect((await call('PUT', '/user-property/gp%3Anope', { description: 'x' })).status).toBe(409);
  expect((await call('DELETE', '/user-property/gp%3Atier')).status).toBe(200);
  expect((await call('DELETE', '/user-property/gp%3Atier')).status).toBe(409);
  expect((await call('DELETE', '/user-property/tier')).status).toBe(400);
});

test('a key never reaches another project’s plan', async () => {
  expect(await names('?showDeleted=true', h.otherProject)).toEqual([]);
  expect((await call('GET', '/event/Checkout%20Completed', undefined, h.otherProject)).status).toBe(400);
  expect((await call('DELETE', '/event/Checkout%20Completed', undefined, h.otherProject)).status).toBe(409);
  expect((await call('GET', '/user-property/gp%3Ainterests', undefined, h.otherProject)).status).toBe(400);
  expect((await call('DELETE', '/user-property/gp%3Ainterests', undefined, h.otherProject)).status).toBe(409);
  expect(await names()).toContain('Checkout Completed');
  expect((await call('GET', '/user-property/gp%3Ainterests')).status).toBe(200);
  expect((await call('GET', '/event')).status).toBe(200);
  expect(await send(`${h.server.urls.app}/api/2/taxonomy/event`)).toMatchObject({ status: 401, body: { success: false } });
});
