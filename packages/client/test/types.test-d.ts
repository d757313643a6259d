import { describe, expectTypeOf, it } from 'vitest';
import {
  createAppClient,
  createExperimentClient,
  createIngestClient,
  type AttributionEvent,
  type EventRecord,
  type FeedbackItem,
  type FlagConfiguration,
  type IngestClientPaths,
  type IngestionPaths,
  type UploadSuccess,
  type Variant,
} from '../src/index.js';

const ingest = createIngestClient({ apiKey: 'k' });
const app = createAppClient({ apiKey: 'k', secretKey: 's' });
const experiment = createExperimentClient({ deploymentKey: 'd' });

describe('factories', () => {
  it('require the credentials of their host role', () => {
    // @ts-expect-error apiKey is required
    createIngestClient({});
    // @ts-expect-error secretKey is required
    createAppClient({ apiKey: 'k' });
    // @ts-expect-error deploymentKey is required
    createExperimentClient({});
    // @ts-expect-error an API key is not a deployment key
    createExperimentClient({ apiKey: 'k', region: 'eu' });
    // @ts-expect-error unknown region
    createIngestClient({ apiKey: 'k', region: 'us' });
    // one options object with every credential fits every factory
    const options = { apiKey: 'k', secretKey: 's', deploymentKey: 'd', region: 'eu' as const };
    createIngestClient(options);
    createAppClient(options);
    createExperimentClient(options);
  });
});

describe('ingest client', () => {
  it('does not ask for api_key', () => {
    void ingest.POST('/batch', { body: { events: [{ event_type: 'Signed Up', user_id: 'alice' }] } });
    // The generated request type requires api_key; the client's does not have it.
    expectTypeOf<IngestionPaths['/batch']['post']['requestBody']['content']['application/json']>().toHaveProperty('api_key');
    expectTypeOf<IngestClientPaths['/batch']['post']['requestBody']['content']['application/json']>().not.toHaveProperty('api_key');
    expectTypeOf<IngestClientPaths['/groupidentify']['post']['requestBody']['content']['application/x-www-form-urlencoded']>().not.toHaveProperty('api_key');
    type AttributionQuery = NonNullable<IngestClientPaths['/attribution']['post']['parameters']['query']>;
    expectTypeOf<AttributionQuery>().not.toHaveProperty('api_key');
    expectTypeOf<AttributionQuery>().toHaveProperty('event');
  });

  it('rejects unknown paths and methods', () => {
    // @ts-expect-error no such path
    void ingest.POST('/events', { body: {} });
    // @ts-expect-error /batch has no GET
    void ingest.GET('/batch');
    // @ts-expect-error feedback lives on the app host
    void ingest.POST('/api/1/ai-feedback/ingest', { body: { source_id: 's', items: [] } });
  });

  it('checks event records', () => {
    // @ts-expect-error event_type is required
    void ingest.POST('/batch', { body: { events: [{ user_id: 'alice' }] } });
    // @ts-expect-error user_id or device_id is required
    void ingest.POST('/2/httpapi', { body: { events: [{ event_type: 'Signed Up' }] } });
    // @ts-expect-error neither id
    const anonymous: EventRecord = { event_type: 'Signed Up', time: 1 };
    void anonymous;
    const byDevice: EventRecord = { event_type: 'Signed Up', device_id: 'dev-1', extra_sdk_field: true };
    void byDevice;
  });

  it('checks group identification and attribution forms, with plain objects', () => {
    void ingest.POST('/groupidentify', {
      body: { identification: { group_type: 'org', group_value: '1', group_properties: { plan: 'pro' } } },
    });
    // @ts-expect-error identification is an object, the client serializes it
    void ingest.POST('/groupidentify', { body: { identification: '{"group_type":"org"}' } });
    void ingest.POST('/attribution', { body: { event: { event_type: '[Branch] Install', platform: 'ios', idfa: 'x' } } });
    // @ts-expect-error platform is ios or android
    void ingest.POST('/attribution', { body: { event: { event_type: '[Branch] Install', platform: 'windows', idfa: 'x' } } });
    // @ts-expect-error an android event needs adid or android_app_set_id
    const noId: AttributionEvent = { event_type: '[Adjust] Install', platform: 'android', idfa: 'x' };
    void noId;
  });

  it('types answers', async () => {
    const { data, error } = await ingest.POST('/batch', { body: { events: [{ event_type: 'e', user_id: 'alice' }] } });
    expectTypeOf(data).toEqualTypeOf<UploadSuccess | undefined>();
    expectTypeOf(error).not.toBeAny();
  });
});

describe('app client', () => {
  it('checks feedback bodies', async () => {
    const items: FeedbackItem[] = [{ unique_id: 'ticket-1', body: 'Slow' }];
    const { data } = await app.POST('/api/1/ai-feedback/ingest', { body: { source_id: 'src', items } });
    expectTypeOf(data?.ingested).toEqualTypeOf<number | undefined>();
    // @ts-expect-error source_id is required
    void app.POST('/api/1/ai-feedback/ingest', { body: { items } });
    // @ts-expect-error unique_id is required
    void app.POST('/api/1/ai-feedback/ingest', { body: { source_id: 's', items: [{ body: 'x' }] } });
  });
});

describe('experiment client', () => {
  it('checks query parameters and headers', async () => {
    const { data } = await experiment.GET('/v1/vardata', {
      params: {
        query: { user_id: 'alice', flag_keys: ['a', 'b'], context: { user_properties: { plan: 'pro' } } },
        header: { 'X-Svc-Exp-Track': 'no-track' },
      },
    });
    expectTypeOf(data).toExtend<{ [key: string]: Variant } | undefined>();
    expectTypeOf(data?.['flag']?.key).toEqualTypeOf<string | undefined>();
    // @ts-expect-error X-Svc-Exp-Track is track or no-track
    void experiment.GET('/v1/vardata', { params: { header: { 'X-Svc-Exp-Track': 'maybe' } } });
    // @ts-expect-error X-Svc-Exp-Exposure-Track is track or no-track
    void experiment.GET('/v1/vardata', { params: { header: { 'X-Svc-Exp-Exposure-Track': true } } });
    // @ts-expect-error context is an object; the client serializes it to JSON
    void experiment.GET('/v1/vardata', { params: { query: { context: '{"user_id":"a"}' } } });
    // @ts-expect-error flag_keys is an array; the client joins it
    void experiment.GET('/v1/flags', { params: { query: { flag_keys: 'a,b' } } });
    const flags = await experiment.GET('/v1/flags');
    expectTypeOf(flags.data).toExtend<FlagConfiguration[] | undefined>();
    expectTypeOf(flags.data?.[0]?.metadata.flagVersion).toEqualTypeOf<number | undefined>();
  });
});
