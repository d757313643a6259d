import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createApiClient, createAppClient, groups, operationRules } from '../src/index.js';
import { fakeFetch, json } from './fake-fetch.js';

const apiKey = 'proj-key-123';
const apis: { name: string; hostRole: string; operationServers: Record<string, { hostRole: string }[]> }[] = JSON.parse(
  readFileSync(new URL('../../../specs/dist/apis.json', import.meta.url), 'utf8'),
);

describe('api client (user mapping writes)', () => {
  it('sends api_key as a query parameter and the mappings as JSON', async () => {
    const fake = fakeFetch(() => json(200, { code: 200, mappings_applied: 2 }));
    const client = createApiClient({ apiKey, fetch: fake.fetch });
    const mapping = [
      { user_id: 'dana-3391@shop', global_user_id: 'dana-3391' },
      { user_id: 'lee-2207@shop', unmap: true as const },
    ];
    const { data } = await client.POST('/usermap', { body: { mapping } });
    expect(data?.mappings_applied).toBe(2);
    const [call] = fake.calls;
    expect(call!.url.origin + call!.url.pathname).toBe('http://localhost:8000/usermap');
    expect(call!.url.searchParams.get('api_key')).toBe(apiKey);
    expect(call!.headers.get('authorization')).toBeNull();
    expect(call!.headers.get('content-type')).toBe('application/json');
    expect(JSON.parse(call!.body)).toEqual({ mapping });
  });

  it('form-encodes the mapping as JSON text when the caller asks for a form body', async () => {
    const fake = fakeFetch(() => json(200, { code: 200, mappings_applied: 1 }));
    const client = createApiClient({ apiKey, fetch: fake.fetch });
    const mapping = { user_id: 'dana-3391@blog', global_user_id: 'dana-3391' };
    await client.POST('/usermap', { body: { mapping }, headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    const [call] = fake.calls;
    expect(call!.url.searchParams.get('api_key')).toBe(apiKey);
    const form = new URLSearchParams(call!.body);
    expect([...form.keys()]).toEqual(['mapping']);
    expect(JSON.parse(form.get('mapping')!)).toEqual(mapping);
  });

  it('has no EU-residency default: region eu needs baseUrl', async () => {
    expect(() => createApiClient({ apiKey, region: 'eu' })).toThrow(/No eu server is declared for host role api; pass baseUrl/);
    const fake = fakeFetch(() => json(200, { code: 200, mappings_applied: 1 }));
    await createApiClient({ apiKey, region: 'eu', baseUrl: 'https://api.eu.example.com', fetch: fake.fetch }).POST('/usermap', {
      body: { mapping: { user_id: 'a', unmap: true } },
    });
    expect(fake.calls[0]!.url.origin).toBe('https://api.eu.example.com');
  });

  it('also serves attribution, which declares the API host among its servers', async () => {
    const fake = fakeFetch(() => json(200, { code: 200, events_ingested: 1, server_upload_time: 1 }));
    const event = { event_type: '[Branch] Install', platform: 'ios', idfa: 'IDFA-1' } as const;
    await createApiClient({ apiKey, fetch: fake.fetch }).POST('/attribution', { body: { event } });
    const [call] = fake.calls;
    expect(call!.url.pathname).toBe('/attribution');
    const form = new URLSearchParams(call!.body);
    expect(form.get('api_key')).toBe(apiKey);
    expect(JSON.parse(form.get('event')!)).toEqual(event);
  });

  it('requires apiKey at run time', () => {
    expect(() => createApiClient({} as never)).toThrow(/createApiClient: apiKey is required/);
  });
});

describe('app client (user mapping lookup, served by the application host)', () => {
  it('looks up mappings with HTTP Basic and comma-separated user_ids, no keys in the URL', async () => {
    const fake = fakeFetch(() => json(200, { 'dana-3391': { svc_id: 1, mapped_from: [], mapped_to: [] }, nobody: {} }));
    const client = createAppClient({ apiKey: 'api', secretKey: 'secret', fetch: fake.fetch, region: 'eu' });
    const { data } = await client.GET('/api/2/usermap', { params: { query: { user_ids: ['dana-3391', 'nobody'] } } });
    expect(data?.['dana-3391']?.mapped_to).toEqual([]);
    const [call] = fake.calls;
    expect(call!.url.origin + call!.url.pathname).toBe('http://localhost:8100/api/2/usermap');
    expect(call!.url.search).toBe('?user_ids=dana-3391,nobody');
    expect(call!.headers.get('authorization')).toBe(`Basic ${Buffer.from('api:secret').toString('base64')}`);
  });
});

describe('generated host roles follow the servers of each operation', () => {
  it('puts an operation with its own servers under the host roles of those servers, every other one under its group', () => {
    for (const api of apis) {
      for (const operationId of groups.find((g) => g.name === api.name)!.operations) {
        const expected = [...new Set((api.operationServers[operationId] ?? [{ hostRole: api.hostRole }]).map((s) => s.hostRole))].sort();
        const actual = Object.entries(operationRules)
          .filter(([, rules]) => Object.values(rules).some((rule) => rule.operationId === operationId))
          .map(([role]) => role)
          .sort();
        expect(actual, operationId).toEqual(expected);
      }
    }
    expect(operationRules.app?.['GET /api/2/usermap']?.operationId).toBe('getUserMappings');
    expect(operationRules.api?.['POST /usermap']?.operationId).toBe('createUserMappings');
    expect(operationRules.api?.['GET /api/2/usermap']).toBeUndefined();
  });
});
