import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createAppClient, encodeForm, operationRules, type TaxonomyErrorBody } from '../src/index.js';
import { fakeFetch, json } from './fake-fetch.js';

const credentials = { apiKey: 'proj-key-123', secretKey: 'secret-456' };
const basic = `Basic ${btoa('proj-key-123:secret-456')}`;
const FORM = 'application/x-www-form-urlencoded';
const taxonomy = JSON.parse(readFileSync(new URL('../../../specs/dist/taxonomy.json', import.meta.url), 'utf8'));

function appClient(handler = () => json(200, { success: true })) {
  const fake = fakeFetch(handler);
  return { fake, client: createAppClient({ ...credentials, fetch: fake.fetch }) };
}

/** The form fields of a recorded body, each with every value it was sent with. */
function formFields(body: string): Record<string, string[]> {
  const form = new URLSearchParams(body);
  return Object.fromEntries([...new Set(form.keys())].map((name) => [name, form.getAll(name)]));
}

describe('taxonomy through the app client', () => {
  it('form-encodes an event type with HTTP Basic, booleans as text and tags comma-separated', async () => {
    const { fake, client } = appClient();
    const { data } = await client.POST('/api/2/taxonomy/event', {
      body: { event_type: 'Checkout Completed', category: 'Checkout Flow', is_active: true, tags: ['checkout', 'revenue'] },
    });
    expect(data).toEqual({ success: true });
    const [call] = fake.calls;
    expect(call!.url.href).toBe('http://localhost:8000/api/2/taxonomy/event');
    expect(call!.headers.get('authorization')).toBe(basic);
    expect(call!.headers.get('content-type')).toBe(FORM);
    expect(formFields(call!.body)).toEqual({
      event_type: ['Checkout Completed'],
      category: ['Checkout Flow'],
      is_active: ['true'],
      tags: ['checkout,revenue'],
    });
  });

  it('joins classifications and enum_values of an event property into one value each', async () => {
    const { fake, client } = appClient();
    await client.POST('/api/2/taxonomy/event-property', {
      body: {
        event_property: 'payment_method',
        event_type: 'Checkout Completed',
        type: 'enum',
        enum_values: ['card', 'paypal', 'invoice'],
        classifications: ['PII', 'REVENUE'],
        is_required: false,
      },
    });
    expect(formFields(fake.calls[0]!.body)).toEqual({
      event_property: ['payment_method'],
      event_type: ['Checkout Completed'],
      type: ['enum'],
      enum_values: ['card,paypal,invoice'],
      classifications: ['PII,REVENUE'],
      is_required: ['false'],
    });
  });

  it('puts the category ID into the path for an update and the name for a read', async () => {
    const { fake, client } = appClient(() => json(200, { success: true, data: { id: 412, name: 'Checkout Flow' } }));
    await client.PUT('/api/2/taxonomy/category/{category}', {
      params: { path: { category: 412 } },
      body: { category_name: 'Checkout' },
    });
    const { data } = await client.GET('/api/2/taxonomy/category/{category}', { params: { path: { category: 'Checkout Flow' } } });
    expect(data?.data.id).toBe(412);
    const [update, read] = fake.calls;
    expect(update!.method).toBe('PUT');
    expect(update!.url.pathname).toBe('/api/2/taxonomy/category/412');
    expect(update!.body).toBe('category_name=Checkout');
    expect(read!.url.pathname).toBe('/api/2/taxonomy/category/Checkout%20Flow');
  });

  it('URL-encodes gp: user property names and sends query parameters of reads and deletes', async () => {
    const { fake, client } = appClient();
    await client.GET('/api/2/taxonomy/user-property/{user_property}', { params: { path: { user_property: 'gp:plan' } } });
    await client.DELETE('/api/2/taxonomy/event-property/{event_property}', {
      params: { path: { event_property: 'cart value' }, query: { event_type: 'Checkout Completed' } },
    });
    await client.GET('/api/2/taxonomy/event', { params: { query: { showDeleted: true } } });
    const [userProperty, deleteProperty, listEvents] = fake.calls;
    expect(userProperty!.url.pathname).toBe('/api/2/taxonomy/user-property/gp%3Aplan');
    expect(deleteProperty!.method).toBe('DELETE');
    expect(deleteProperty!.url.pathname).toBe('/api/2/taxonomy/event-property/cart%20value');
    expect(deleteProperty!.url.searchParams.get('event_type')).toBe('Checkout Completed');
    expect(deleteProperty!.body).toBe('');
    expect(listEvents!.url.search).toBe('?showDeleted=true');
  });

  it('returns the success/errors envelope of a failure as the error', async () => {
    const failure: TaxonomyErrorBody = { success: false, errors: [{ message: 'Event type already exists' }] };
    const { client } = appClient(() => json(409, failure));
    const { data, error, response } = await client.POST('/api/2/taxonomy/event', { body: { event_type: 'Checkout Completed' } });
    expect(data).toBeUndefined();
    expect(response.status).toBe(409);
    expect(error).toEqual(failure);
  });
});

describe('form arrays follow the bundles', () => {
  it('has a delimited-array rule for exactly the form fields the taxonomy bundle encodes with explode: false', () => {
    let checked = 0;
    for (const [path, item] of Object.entries<Record<string, any>>(taxonomy.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        const media = op.requestBody?.content?.[FORM];
        if (!media) continue;
        const declared = Object.fromEntries(
          Object.entries<any>(media.encoding ?? {}).map(([field, enc]) => [field, { style: enc.style, explode: enc.explode }]),
        );
        expect(operationRules.app?.[`${method.toUpperCase()} ${path}`]?.form?.arrays, `${method} ${path}`).toEqual(declared);
        checked++;
      }
    }
    expect(checked).toBe(8);
  });

  it('joins non-exploded arrays with the delimiter of their style and repeats exploded ones', () => {
    const body = { a: ['x', 'y'], b: [1, 2], c: ['p', 'q'], d: ['r', 's'], e: 'plain' };
    const arrays = {
      a: { style: 'form', explode: false },
      b: { style: 'pipeDelimited', explode: false },
      c: { style: 'spaceDelimited', explode: false },
      d: { style: 'form', explode: true },
    };
    expect(encodeForm(body, [], arrays)).toBe('a=x%2Cy&b=1%7C2&c=p+q&d=r&d=s&e=plain');
  });
});
