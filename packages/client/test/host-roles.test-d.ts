import { describe, expectTypeOf, it } from 'vitest';
import { createApiClient, createAppClient, createIngestClient, type ApiClientPaths, type AppClientPaths } from '../src/index.js';

const api = createApiClient({ apiKey: 'k' });
const app = createAppClient({ apiKey: 'k', secretKey: 's' });

describe('createApiClient', () => {
  it('requires an API key and knows no other credential', () => {
    // @ts-expect-error apiKey is required
    createApiClient({});
    // @ts-expect-error apiKey is a string
    createApiClient({ apiKey: 42 });
    // @ts-expect-error unknown region
    createApiClient({ apiKey: 'k', region: 'us' });
    createApiClient({ apiKey: 'k', region: 'eu', baseUrl: 'https://api.eu.example.com' });
  });

  it('types the mapping write without api_key', async () => {
    const { data } = await api.POST('/usermap', { body: { mapping: { user_id: 'a', global_user_id: 'b' } } });
    expectTypeOf(data?.mappings_applied).toEqualTypeOf<number | undefined>();
    void api.POST('/usermap', { body: { mapping: [{ user_id: 'a', unmap: true }, { user_id: 'c', global_user_id: 'd' }] } });
    // @ts-expect-error a mapping needs global_user_id unless it unmaps
    void api.POST('/usermap', { body: { mapping: { user_id: 'a' } } });
    // @ts-expect-error user_id is required
    void api.POST('/usermap', { body: { mapping: { global_user_id: 'b' } } });
    // @ts-expect-error mapping is required
    void api.POST('/usermap', { body: {} });
    // The client injects api_key: neither the body nor the query string of the client's types has it.
    expectTypeOf<NonNullable<ApiClientPaths['/usermap']['post']['requestBody']>['content']['application/json']>().not.toHaveProperty('api_key');
    expectTypeOf<NonNullable<ApiClientPaths['/usermap']['post']['requestBody']>['content']['application/json']>().toHaveProperty('mapping');
    expectTypeOf<NonNullable<ApiClientPaths['/usermap']['post']['parameters']['query']>>().not.toHaveProperty('api_key');
  });

  it('serves only what the API host role serves', () => {
    // @ts-expect-error the mapping lookup is served by the application host
    void api.GET('/api/2/usermap', { params: { query: { user_ids: ['a'] } } });
    // @ts-expect-error deletion is served by the application host
    void api.POST('/api/2/deletions/users', { body: { user_ids: ['a'] } });
  });
});

describe('mapping lookup on the application host', () => {
  it('is typed on the app client, with 1..100 user IDs as an array and no keys in the query', async () => {
    const { data } = await app.GET('/api/2/usermap', { params: { query: { user_ids: ['dana-3391'] } } });
    expectTypeOf(data?.['dana-3391']?.mapped_from).toEqualTypeOf<{ svc_id: number; user_id: string }[] | undefined>();
    // @ts-expect-error user_ids is an array; the client joins it
    void app.GET('/api/2/usermap', { params: { query: { user_ids: 'a,b' } } });
    // @ts-expect-error user_ids is required
    void app.GET('/api/2/usermap', { params: { query: {} } });
    // The app client authenticates with HTTP Basic, never with keys in the URL.
    type LookupQuery = AppClientPaths['/api/2/usermap']['get']['parameters']['query'];
    expectTypeOf<LookupQuery>().toHaveProperty('user_ids');
    expectTypeOf<LookupQuery>().not.toHaveProperty('api_key');
    expectTypeOf<LookupQuery>().not.toHaveProperty('secret_key');
    // @ts-expect-error the mapping write is served by the API host
    void app.POST('/usermap', { body: { mapping: { user_id: 'a', unmap: true } } });
    // @ts-expect-error the lookup has only GET
    void app.POST('/api/2/usermap', { body: {} });
  });

  it('is not on the ingest client', () => {
    const ingest = createIngestClient({ apiKey: 'k' });
    // @ts-expect-error not served by the ingestion host
    void ingest.GET('/api/2/usermap', { params: { query: { user_ids: ['a'] } } });
  });
});
