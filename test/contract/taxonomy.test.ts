// Taxonomy (doc 000) against the Prism mock of the app host role: the typed client drives every
// operation with plain objects (Prism accepts each request and the spec validator agrees with
// how the client serialized it), every documented error status parses to its schema, and the
// requests the spec forbids are refused.
import { createAppClient } from '@svc/client';
import { describe, expect, inject, test } from 'vitest';
import {
  API_KEY,
  BASIC,
  type ForbiddenCase,
  type RawRequest,
  type ValidCase,
  expectDocumentedBody,
  forbiddenRequests,
  get,
  query,
  recordingFetch,
  send,
  validRequests,
} from './support/mock-requests.js';
import { describeProblems, validateRequest, bundle, HTTP_METHODS } from '@svc/openapi-validation';

const taxonomy = bundle('taxonomy');
const recorder = recordingFetch();
const sent: RawRequest[] = [];
/** Keeps each request as sent, for the spec validator, then sends it through the recorder. */
const fetchAndKeep: typeof fetch = async (input, init) => {
  const request = new Request(input, init);
  const url = new URL(request.url);
  sent.push({
    method: request.method,
    url: url.pathname + url.search,
    headers: Object.fromEntries(request.headers),
    body: await request.clone().text(),
  });
  return recorder.fetch(request);
};
// Every documented status is forced, 429 included: no retries, which would wait its Retry-After.
const app = createAppClient({ apiKey: API_KEY, secretKey: 'secret-key-0123', baseUrl: inject('mockUrls').app, fetch: fetchAndKeep, maxRetries: 0 });

/** operationId → method and path template, read from the bundle. */
const templates = new Map(
  Object.entries(taxonomy.doc.paths as Record<string, Record<string, { operationId?: string; responses: object }>>).flatMap(
    ([path, item]) =>
      HTTP_METHODS.flatMap((method) => (item[method] ? [[item[method]!.operationId!, { method, path, op: item[method]! }] as const] : [])),
  ),
);

type Headers = Record<string, string>;
interface Answer {
  data?: unknown;
  error?: unknown;
  response: Response;
}

// One call per operation, with plain objects; `headers` lets a test ask Prism for another status.
const calls: [name: string, call: (headers?: Headers) => Promise<Answer>][] = [
  ['create a category', (headers) => app.POST('/api/2/taxonomy/category', { body: { category_name: 'Checkout Flow' }, headers })],
  ['list categories', (headers) => app.GET('/api/2/taxonomy/category', { headers })],
  [
    'get a category by name',
    (headers) => app.GET('/api/2/taxonomy/category/{category}', { params: { path: { category: 'Checkout Flow' } }, headers }),
  ],
  [
    'rename a category by ID',
    (headers) =>
      app.PUT('/api/2/taxonomy/category/{category}', { params: { path: { category: 412 } }, body: { category_name: 'Checkout' }, headers }),
  ],
  ['delete a category by ID', (headers) => app.DELETE('/api/2/taxonomy/category/{category}', { params: { path: { category: 412 } }, headers })],
  [
    'plan an event type with tags',
    (headers) =>
      app.POST('/api/2/taxonomy/event', {
        body: { event_type: 'Checkout Completed', category: 'Checkout Flow', is_active: true, tags: ['checkout', 'revenue'], owner: 'dana@example.com' },
        headers,
      }),
  ],
  ['list event types with deleted ones', (headers) => app.GET('/api/2/taxonomy/event', { params: { query: { showDeleted: true } }, headers })],
  [
    'get an event type',
    (headers) => app.GET('/api/2/taxonomy/event/{event_type}', { params: { path: { event_type: 'Checkout Completed' } }, headers }),
  ],
  [
    'update an event type',
    (headers) =>
      app.PUT('/api/2/taxonomy/event/{event_type}', {
        params: { path: { event_type: 'Checkout Completed' } },
        body: { new_event_type: 'Order Completed', display_name: 'Order completed', is_hidden_from_pathfinder: true, tags: ['checkout'] },
        headers,
      }),
  ],
  [
    'delete an event type',
    (headers) => app.DELETE('/api/2/taxonomy/event/{event_type}', { params: { path: { event_type: 'Checkout Completed' } }, headers }),
  ],
  [
    'restore an event type',
    (headers) => app.POST('/api/2/taxonomy/event/{event_type}/restore', { params: { path: { event_type: 'Checkout Completed' } }, headers }),
  ],
  [
    'plan an event property with enum values',
    (headers) =>
      app.POST('/api/2/taxonomy/event-property', {
        body: {
          event_property: 'payment_method',
          event_type: 'Checkout Completed',
          type: 'enum',
          enum_values: ['card', 'paypal', 'invoice'],
          is_required: true,
        },
        headers,
      }),
  ],
  [
    'list the properties of an event type',
    (headers) => app.GET('/api/2/taxonomy/event-property', { params: { query: { event_type: 'Checkout Completed' } }, headers }),
  ],
  [
    'get a shared event property',
    (headers) => app.GET('/api/2/taxonomy/event-property/{event_property}', { params: { path: { event_property: 'cart_value' } }, headers }),
  ],
  [
    'update a shared event property with classifications',
    (headers) =>
      app.PUT('/api/2/taxonomy/event-property/{event_property}', {
        params: { path: { event_property: 'cart_value' } },
        body: { description: 'Cart value in USD', type: 'number', classifications: ['REVENUE', 'SENSITIVE'] },
        headers,
      }),
  ],
  [
    'delete the override of an event property',
    (headers) =>
      app.DELETE('/api/2/taxonomy/event-property/{event_property}', {
        params: { path: { event_property: 'payment_method' }, query: { event_type: 'Checkout Completed' } },
        headers,
      }),
  ],
  [
    'plan a gp: user property',
    (headers) =>
      app.POST('/api/2/taxonomy/user-property', {
        body: { user_property: 'gp:plan', type: 'enum', enum_values: ['basic', 'pro'], classifications: ['REVENUE'] },
        headers,
      }),
  ],
  ['list user properties', (headers) => app.GET('/api/2/taxonomy/user-property', { headers })],
  [
    'get a user property',
    (headers) => app.GET('/api/2/taxonomy/user-property/{user_property}', { params: { path: { user_property: 'gp:plan' } }, headers }),
  ],
  [
    'rename a user property',
    (headers) =>
      app.PUT('/api/2/taxonomy/user-property/{user_property}', {
        params: { path: { user_property: 'gp:plan' } },
        body: { new_user_property: 'gp:subscription_plan', is_array_type: false },
        headers,
      }),
  ],
  [
    'delete a user property',
    (headers) => app.DELETE('/api/2/taxonomy/user-property/{user_property}', { params: { path: { user_property: 'gp:plan' } }, headers }),
  ],
];

/** Runs one call and returns the operation the spec validator matched its request to. */
async function run(call: (headers?: Headers) => Promise<Answer>, headers?: Headers) {
  sent.length = 0;
  recorder.seen.length = 0;
  const answer = await call(headers);
  expect(sent).toHaveLength(1);
  const verdict = validateRequest(sent[0]!);
  expect(verdict.valid, describeProblems(verdict)).toBe(true);
  expect(recorder.seen[0]!.violations, 'Prism found violations in the request').toBeNull();
  const operationId = verdict.operation.replace(/ \(taxonomy\)$/, '');
  const template = templates.get(operationId);
  expect(template, `${verdict.operation} is not a taxonomy operation`).toBeDefined();
  return { answer, operationId, ...template! };
}

describe('the typed client through every taxonomy operation', () => {
  const reached = new Set<string>();

  for (const [name, call] of calls) {
    test(`${name}: 200 with the documented body`, async () => {
      const { answer, operationId, method, path } = await run(call);
      expect(answer.response.status).toBe(200);
      expect(answer.error).toBeUndefined();
      expectDocumentedBody(method, path, 200, answer.data);
      reached.add(operationId);
    });
  }

  test('every taxonomy operation was called', () => {
    expect([...reached].sort()).toEqual([...taxonomy.operations].sort());
  });

  for (const [name, call] of calls) {
    test(`${name}: every documented error status parses to the success/errors envelope (408, 431 and 503 to the service-wide body)`, async () => {
      const { op, method, path } = await run(call);
      const statuses = Object.keys(op.responses).filter((status) => status !== '200');
      expect(statuses.length).toBeGreaterThan(0);
      for (const status of statuses) {
        const { error, response } = await call({ Prefer: `code=${status}` });
        expect(response.status).toBe(Number(status));
        expectDocumentedBody(method, path, Number(status), error);
        // Answered before the operation is known, or when the storage does not answer (specs/shared/conventions.md).
        if (status === '408' || status === '431' || status === '503') expect(error).toMatchObject({ code: Number(status), error: expect.any(String) });
        else expect(error).toMatchObject({ success: false, errors: [{ message: expect.any(String) }] });
      }
    });
  }
});

const authorizedForm = (method: string, url: string, fields: Record<string, string>): RawRequest => ({
  method,
  url,
  headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: BASIC },
  body: new URLSearchParams(fields).toString(),
});
const post = (url: string, fields: Record<string, string>) => authorizedForm('POST', url, fields);

const forbidden: ForbiddenCase[] = [
  {
    name: 'an event property with a classification outside PII, SENSITIVE, REVENUE',
    role: 'app',
    request: post('/api/2/taxonomy/event-property', { event_property: 'cart_value', classifications: 'SECRET' }),
    prismStatus: 400,
    problem: /form body: \/classifications\/0 must be equal to one of the allowed values/,
  },
  {
    name: 'an event property whose comma-separated classifications hold one unknown value',
    role: 'app',
    request: post('/api/2/taxonomy/event-property', { event_property: 'cart_value', classifications: 'PII,secret' }),
    prismStatus: 400,
    problem: /form body: \/classifications\/1 must be equal to one of the allowed values/,
  },
  {
    name: 'an event type without the required event_type',
    role: 'app',
    request: post('/api/2/taxonomy/event', { category: 'Checkout Flow', tags: 'checkout' }),
    prismStatus: 400,
    problem: /form body: \/ must have required property 'event_type'/,
  },
  {
    name: 'a category without credentials',
    role: 'app',
    request: { method: 'POST', url: '/api/2/taxonomy/category', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'category_name=Checkout' },
    prismStatus: 401,
    problem: /credentials: none of the security requirements is met \(BasicAuth\)/,
  },
  {
    name: 'the event type listing with a bearer token instead of Basic credentials',
    role: 'app',
    request: get('/api/2/taxonomy/event', { authorization: 'Bearer 0123456789' }),
    prismStatus: 401,
    problem: /credentials: none of the security requirements is met \(BasicAuth\)/,
  },
  {
    name: 'an event property of type date',
    role: 'app',
    request: post('/api/2/taxonomy/event-property', { event_property: 'signup_day', type: 'date' }),
    prismStatus: 400,
    problem: /form body: \/type must be equal to one of the allowed values/,
  },
  {
    name: 'an event type with is_active=maybe',
    role: 'app',
    request: post('/api/2/taxonomy/event', { event_type: 'Checkout Completed', is_active: 'maybe' }),
    prismStatus: 400,
    problem: /form body: \/is_active must be boolean/,
  },
  {
    name: 'a user property without the gp: prefix',
    role: 'app',
    request: post('/api/2/taxonomy/user-property', { user_property: 'plan' }),
    prismStatus: 400,
    problem: /form body: \/user_property must match pattern/,
  },
  {
    name: 'a category with an empty category_name',
    role: 'app',
    request: post('/api/2/taxonomy/category', { category_name: '' }),
    prismStatus: 400,
    problem: /form body: \/category_name must NOT have fewer than 1 characters/,
  },
  {
    name: 'the event type listing with showDeleted=yes',
    role: 'app',
    request: get(`/api/2/taxonomy/event?${query({ showDeleted: 'yes' })}`, { authorization: BASIC }),
    prismStatus: 400,
    problem: /query parameter showDeleted: \/ must be boolean/,
  },
  {
    name: 'an event property with a classification listed twice',
    role: 'app',
    request: post('/api/2/taxonomy/event-property', { event_property: 'cart_value', classifications: 'PII,PII' }),
    prismStatus: 400,
    problem: /form body: \/classifications must NOT have duplicate items/,
  },
  {
    name: 'an event type whose tags hold an empty tag',
    role: 'app',
    request: post('/api/2/taxonomy/event', { event_type: 'Checkout Completed', tags: 'checkout,,web' }),
    prismStatus: 400,
    problem: /form body: \/tags\/1 must NOT have fewer than 1 characters/,
  },
  {
    name: 'a category sent as JSON instead of a form',
    role: 'app',
    request: {
      method: 'POST',
      url: '/api/2/taxonomy/category',
      headers: { 'content-type': 'application/json', authorization: BASIC },
      body: JSON.stringify({ category_name: 'Checkout' }),
    },
    prismStatus: 400,
    problem: /body: content type application\/json is not one of application\/x-www-form-urlencoded/,
  },
];

const valid: ValidCase[] = [
  {
    name: 'event property with classifications PII,REVENUE (literal commas)',
    role: 'app',
    request: {
      ...post('/api/2/taxonomy/event-property', {}),
      body: 'event_property=cart_value&type=number&classifications=PII,REVENUE',
    },
    status: 200,
  },
  {
    name: 'event type with percent-encoded comma-separated tags',
    role: 'app',
    request: post('/api/2/taxonomy/event', { event_type: 'Checkout Completed', is_active: 'true', tags: 'checkout,web' }),
    status: 200,
  },
  {
    name: 'event type listing with showDeleted=true',
    role: 'app',
    request: get(`/api/2/taxonomy/event?${query({ showDeleted: 'true' })}`, { authorization: BASIC }),
    status: 200,
  },
  {
    name: 'gp: user property',
    role: 'app',
    request: post('/api/2/taxonomy/user-property', { user_property: 'gp:plan', enum_values: 'basic,pro', type: 'enum' }),
    status: 200,
  },
  {
    name: 'category',
    role: 'app',
    request: post('/api/2/taxonomy/category', { category_name: 'Checkout Flow' }),
    status: 200,
  },
];

describe('taxonomy requests through raw HTTP', () => {
  forbiddenRequests(forbidden);
  validRequests(valid);
});

// Requests to path templates: forbiddenRequests() looks operations up by literal path, so these
// name their template and repeat its checks here.
const forbiddenOnTemplates: (ForbiddenCase & { template: string })[] = [
  {
    name: 'a category rename addressed by name instead of ID',
    role: 'app',
    template: '/api/2/taxonomy/category/{category}',
    request: authorizedForm('PUT', '/api/2/taxonomy/category/Checkout%20Flow', { category_name: 'Checkout' }),
    prismStatus: 400,
    problem: /path parameter category: \/ must be integer/,
  },
  {
    name: 'a category deletion by ID 0',
    role: 'app',
    template: '/api/2/taxonomy/category/{category}',
    request: { method: 'DELETE', url: '/api/2/taxonomy/category/0', headers: { authorization: BASIC } },
    prismStatus: 400,
    problem: /path parameter category: \/ must be >= 1/,
  },
  {
    name: 'a user property read without the gp: prefix',
    role: 'app',
    template: '/api/2/taxonomy/user-property/{user_property}',
    request: get('/api/2/taxonomy/user-property/plan', { authorization: BASIC }),
    prismStatus: 400,
    problem: /path parameter user_property: \/ must match pattern/,
  },
  {
    name: 'an event type restore without credentials',
    role: 'app',
    template: '/api/2/taxonomy/event/{event_type}/restore',
    request: { method: 'POST', url: '/api/2/taxonomy/event/Checkout%20Completed/restore' },
    prismStatus: 401,
    problem: /credentials: none of the security requirements is met \(BasicAuth\)/,
  },
];

describe('taxonomy requests to path templates through raw HTTP', () => {
  for (const c of forbiddenOnTemplates) {
    test(`prism rejects ${c.name} with ${c.prismStatus} [${c.request.method} ${c.template}]`, async () => {
      const answer = await send(c.role, c.request);
      expect(answer.status, JSON.stringify(answer.body)).toBe(c.prismStatus);
      expectDocumentedBody(c.request.method, c.template, answer.status, answer.body);
      const verdict = validateRequest(c.request);
      expect(verdict.valid, `the spec validator accepted ${c.name}`).toBe(false);
      expect(describeProblems(verdict)).toMatch(c.problem);
    });
  }

  test('the category segment is a name for reading: prism and the spec validator accept it', async () => {
    const request = get('/api/2/taxonomy/category/Checkout%20Flow', { authorization: BASIC });
    const verdict = validateRequest(request);
    expect(verdict.valid, describeProblems(verdict)).toBe(true);
    const answer = await send('app', request);
    expect(answer.status).toBe(200);
    expect(answer.violations).toBeNull();
    expectDocumentedBody('GET', '/api/2/taxonomy/category/{category}', 200, answer.body);
  });
});
