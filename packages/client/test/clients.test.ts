import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  createAppClient,
  createExperimentClient,
  createIngestClient,
  operationRules,
  servers,
} from '../src/index.js';
import { fakeFetch, json } from './fake-fetch.js';

const apiKey = 'proj-key-123';
const specsDist = new URL('../../../specs/dist/', import.meta.url);
const bundle = (name: string) => JSON.parse(readFileSync(new URL(`${name}.json`, specsDist), 'utf8'));
const apis: { name: string; hostRole: string; servers: { hostRole: string; region: string; url: string }[] }[] = JSON.parse(
  readFileSync(new URL('apis.json', specsDist), 'utf8'),
);

describe('ingest client', () => {
  it.each(['/batch', '/2/httpapi'] as const)('puts api_key into the JSON body of %s', async (path) => {
    const fake = fakeFetch(() => json(200, { code: 200, events_ingested: 1, payload_size_bytes: 10, server_upload_time: 1 }));
    const client = createIngestClient({ apiKey, fetch: fake.fetch });
    const { data } = await client.POST(path, {
      body: { events: [{ event_type: 'Signed Up', user_id: 'alice-1' }], options: { min_id_length: 3 } },
    });
    expect(data?.events_ingested).toBe(1);
    expect(fake.calls).toHaveLength(1);
    const [call] = fake.calls;
    expect(call!.method).toBe('POST');
    expect(call!.url.href).toBe(`http://localhost:8000${path}`);
    expect(call!.url.search).toBe('');
    expect(call!.headers.get('content-type')).toBe('application/json');
    expect(call!.headers.get('authorization')).toBeNull();
    expect(JSON.parse(call!.body)).toEqual({
      api_key: apiKey,
      events: [{ event_type: 'Signed Up', user_id: 'alice-1' }],
      options: { min_id_length: 3 },
    });
  });

  it('form-encodes /groupidentify with identification as JSON and api_key as a form field', async () => {
    const fake = fakeFetch(() => json(200, { code: 200, identifications_ingested: 2, server_upload_time: 1 }));
    const client = createIngestClient({ apiKey, fetch: fake.fetch });
    const identification = [
      { group_type: 'org id', group_value: '10412', group_properties: { $set: { plan: 'enterprise', seats: 250 } } },
      { group_type: 'org id', group_value: '10577', group_properties: { industry: 'retail & co' } },
    ];
    const { data, error } = await client.POST('/groupidentify', { body: { identification } });
    expect(error).toBeUndefined();
    expect(data?.identifications_ingested).toBe(2);
    const [call] = fake.calls;
    expect(call!.headers.get('content-type')).toBe('application/x-www-form-urlencoded');
    expect(call!.url.search).toBe('');
    const form = new URLSearchParams(call!.body);
    expect([...form.keys()].sort()).toEqual(['api_key', 'identification']);
    expect(form.get('api_key')).toBe(apiKey);
    expect(JSON.parse(form.get('identification')!)).toEqual(identification);
  });

  it('form-encodes /attribution with event as JSON', async () => {
    const fake = fakeFetch(() => json(200, { code: 200, events_ingested: 1, server_upload_time: 1 }));
    const client = createIngestClient({ apiKey, fetch: fake.fetch });
    const event = { event_type: '[Branch] Install', platform: 'ios', idfa: 'IDFA-1', user_properties: { '[Branch] campaign': 'w' } } as const;
    await client.POST('/attribution', { body: { event } });
    const [call] = fake.calls;
    expect(call!.headers.get('content-type')).toBe('application/x-www-form-urlencoded');
    const form = new URLSearchParams(call!.body);
    expect(form.get('api_key')).toBe(apiKey);
    expect(JSON.parse(form.get('event')!)).toEqual(event);
  });

  it('sends api_key and the JSON event in the query string when /attribution has no body', async () => {
    const fake = fakeFetch(() => json(200, { code: 200, events_ingested: 1, server_upload_time: 1 }));
    const client = createIngestClient({ apiKey, fetch: fake.fetch });
    const event = { event_type: '[Adjust] Install', platform: 'android', adid: '38400000-8cf0' } as const;
    await client.POST('/attribution', { params: { query: { event } } });
    const [call] = fake.calls;
    expect(call!.body).toBe('');
    expect(call!.url.searchParams.get('api_key')).toBe(apiKey);
    expect(JSON.parse(call!.url.searchParams.get('event')!)).toEqual(event);
  });

  it('returns error bodies instead of throwing', async () => {
    const fake = fakeFetch(() => json(400, { code: 400, error: 'Request missing required field', missing_field: 'events' }));
    const client = createIngestClient({ apiKey, fetch: fake.fetch });
    const { data, error, response } = await client.POST('/batch', { body: { events: [{ event_type: 'x', device_id: 'dev-12345' }] } });
    expect(data).toBeUndefined();
    expect(response.status).toBe(400);
    expect(error).toMatchObject({ code: 400, missing_field: 'events' });
  });
});

describe('app client', () => {
  it('authenticates feedback ingestion with HTTP Basic apiKey:secretKey', async () => {
    const fake = fakeFetch(() => json(200, { ingested: 1, failed: 0, errors: [] }));
    const client = createAppClient({ apiKey: 'api', secretKey: 'sécret', fetch: fake.fetch });
    const { data } = await client.POST('/api/1/ai-feedback/ingest', {
      body: { source_id: 'src_1', items: [{ unique_id: 'ticket-1', body: 'Slow export' }] },
    });
    expect(data?.ingested).toBe(1);
    const [call] = fake.calls;
    const expected = `Basic ${Buffer.from('api:sécret', 'utf8').toString('base64')}`;
    expect(call!.headers.get('authorization')).toBe(expected);
    expect(call!.url.href).toBe('http://localhost:8000/api/1/ai-feedback/ingest');
    expect(JSON.parse(call!.body)).toEqual({ source_id: 'src_1', items: [{ unique_id: 'ticket-1', body: 'Slow export' }] });
  });

  it('keeps an Authorization header the caller sets', async () => {
    const fake = fakeFetch(() => json(200, { ingested: 0, failed: 0, errors: [] }));
    const client = createAppClient({ apiKey: 'api', secretKey: 'secret', fetch: fake.fetch });
    await client.POST('/api/1/ai-feedback/ingest', {
      body: { source_id: 's', items: [{ unique_id: 'u' }] },
      headers: { Authorization: 'Basic b3RoZXI6a2V5' },
    });
    expect(fake.calls[0]!.headers.get('authorization')).toBe('Basic b3RoZXI6a2V5');
  });
});

describe('experiment client', () => {
  it('sends Api-Key, comma-joined flag_keys, JSON context and the tracking headers', async () => {
    const fake = fakeFetch(() => json(200, { 'checkout-redesign': { key: 'treatment', value: 'treatment' } }));
    const client = createExperimentClient({ deploymentKey: 'server-abc', fetch: fake.fetch });
    const context = { user_properties: { plan: 'pro', country: 'Germany' }, groups: { org: ['a&b'] } };
    const { data } = await client.GET('/v1/vardata', {
      params: {
        query: { user_id: 'alice@example.com', flag_keys: ['checkout-redesign', 'pricing-page-test'], context },
        header: { 'X-Svc-Exp-Track': 'no-track', 'X-Svc-Exp-Exposure-Track': 'track' },
      },
    });
    expect(data?.['checkout-redesign']?.key).toBe('treatment');
    const [call] = fake.calls;
    expect(call!.method).toBe('GET');
    expect(call!.url.pathname).toBe('/v1/vardata');
    expect(call!.headers.get('authorization')).toBe('Api-Key server-abc');
    expect(call!.headers.get('x-svc-exp-track')).toBe('no-track');
    expect(call!.headers.get('x-svc-exp-exposure-track')).toBe('track');
    expect(call!.url.search).toContain('flag_keys=checkout-redesign,pricing-page-test');
    expect(call!.url.searchParams.getAll('flag_keys')).toEqual(['checkout-redesign,pricing-page-test']);
    expect(call!.url.searchParams.get('user_id')).toBe('alice@example.com');
    expect(JSON.parse(call!.url.searchParams.get('context')!)).toEqual(context);
    expect(call!.url.searchParams.has('api_key')).toBe(false);
  });

  it('authenticates /v1/flags too', async () => {
    const fake = fakeFetch(() => json(200, []));
    const client = createExperimentClient({ deploymentKey: 'k', fetch: fake.fetch });
    await client.GET('/v1/flags', { params: { query: { flag_keys: ['one'] } } });
    expect(fake.calls[0]!.headers.get('authorization')).toBe('Api-Key k');
    expect(fake.calls[0]!.url.search).toBe('?flag_keys=one');
  });
});

describe('base URLs', () => {
  it('uses the standard server by default and the EU server for region eu', async () => {
    const fake = fakeFetch(() => json(200, []));
    await createExperimentClient({ deploymentKey: 'k', fetch: fake.fetch }).GET('/v1/flags');
    await createExperimentClient({ deploymentKey: 'k', fetch: fake.fetch, region: 'eu' }).GET('/v1/flags');
    await createIngestClient({ apiKey, fetch: fake.fetch, region: 'eu' }).POST('/batch', {
      body: { events: [{ event_type: 'e', user_id: 'user-1' }] },
    });
    await createAppClient({ apiKey, secretKey: 's', fetch: fake.fetch, region: 'eu' }).POST('/api/1/ai-feedback/ingest', {
      body: { source_id: 's', items: [{ unique_id: 'u' }] },
    });
    expect(fake.calls.map((c) => c.url.origin)).toEqual([
      'http://localhost:8000',
      'http://localhost:8100',
      'http://localhost:8100',
      'http://localhost:8100',
    ]);
  });

  it('lets baseUrl override the region', async () => {
    const fake = fakeFetch(() => json(200, []));
    await createExperimentClient({ deploymentKey: 'k', fetch: fake.fetch, region: 'eu', baseUrl: 'https://flags.example.com/' }).GET(
      '/v1/flags',
    );
    expect(fake.calls[0]!.url.href).toBe('https://flags.example.com/v1/flags');
  });

  it('takes the default servers from apis.json', () => {
    for (const api of apis) {
      for (const server of api.servers.filter((s) => s.hostRole === api.hostRole)) {
        expect((servers as Record<string, Record<string, string>>)[api.hostRole]?.[server.region]).toBe(server.url);
      }
    }
  });
});

describe('runtime checks of credentials', () => {
  it('throws when a required credential is missing (for callers without types)', () => {
    expect(() => createIngestClient({} as never)).toThrow(/apiKey is required/);
    expect(() => createAppClient({ apiKey: 'a' } as never)).toThrow(/secretKey is required/);
    expect(() => createExperimentClient({ apiKey: 'a' } as never)).toThrow(/deploymentKey is required/);
  });
});

describe('generated rules follow the bundles', () => {
  it('lists form bodies with their JSON fields and JSON query parameters as the specs declare them', () => {
    const ingestion = bundle('ingestion');
    const experiment = bundle('experiment');
    const formFields = (path: string) =>
      Object.keys(ingestion.paths[path].post.requestBody.content['application/x-www-form-urlencoded'].encoding);
    expect(operationRules.ingest?.['POST /groupidentify']?.form?.jsonFields).toEqual(formFields('/groupidentify'));
    expect(operationRules.ingest?.['POST /attribution']?.form?.jsonFields).toEqual(formFields('/attribution'));
    expect(operationRules.ingest?.['POST /batch']?.form).toBeNull();
    expect(operationRules.ingest?.['POST /attribution']?.query.json).toEqual(['event']);
    expect(operationRules.experiment?.['GET /v1/vardata']?.query.json).toEqual(['context']);
    expect(operationRules.experiment?.['GET /v1/vardata']?.query.arrays).toEqual({ flag_keys: { style: 'form', explode: false } });
    expect(experiment.components.parameters.Context.content['application/json']).toBeDefined();
    for (const [key, rule] of Object.entries(operationRules.ingest ?? {})) {
      const [method, path] = key.split(' ');
      expect(rule.credentials).toEqual(ingestion.paths[path!][method!.toLowerCase()]['x-svc-credentials'] ?? []);
    }
  });
});
