// The typed client, driven through every operation of doc 002 against the Prism mocks: Prism
// accepts each request (2xx, no `sl-violations`), and every answer parses to the documented
// schema. The upload helpers are driven the same way.
import {
  createAppClient,
  createExperimentClient,
  createIngestClient,
  ingestFeedback,
  uploadEvents,
  type EventRecord,
} from '@svc/client';
import { describe, expect, inject, test } from 'vitest';
import { acceptedByPrism } from './support/client-checks.js';
import { API_KEY, expectDocumentedBody } from './support/mock-requests.js';

const urls = inject('mockUrls');
const checkedFetch = acceptedByPrism();
const credentials = { apiKey: API_KEY, secretKey: 'secret-key-0123', deploymentKey: 'server-deployment-key-0123' };

const ingest = createIngestClient({ ...credentials, baseUrl: urls.ingest, fetch: checkedFetch });
const app = createAppClient({ ...credentials, baseUrl: urls.app, fetch: checkedFetch });
const experiment = createExperimentClient({ ...credentials, baseUrl: urls.experiment, fetch: checkedFetch });

const events: EventRecord[] = [
  { event_type: 'Page Viewed', user_id: 'alice@example.com', time: 1_700_000_000_000, event_properties: { path: '/pricing' } },
  { event_type: 'Song Purchased', device_id: 'C8F9E604-F01A-4BD9-95C6-8E5357DF265D', price: 1.99, quantity: 2, revenue_type: 'song' },
  { event_type: '$identify', user_id: 'alice@example.com', user_properties: { $set: { plan: 'pro' }, $add: { logins: 1 } } },
];

describe('ingest host role', () => {
  test('POST /2/httpapi with events and options', async () => {
    const { data, response } = await ingest.POST('/2/httpapi', { body: { events, options: { min_id_length: 5 } } });
    expect(response.status).toBe(200);
    expectDocumentedBody('post', '/2/httpapi', 200, data);
  });

  test('POST /batch', async () => {
    const { data, response } = await ingest.POST('/batch', { body: { events } });
    expect(response.status).toBe(200);
    expectDocumentedBody('post', '/batch', 200, data);
  });

  test('POST /groupidentify with one and with several identifications', async () => {
    const identification = { group_type: 'org id', group_value: '10412', group_properties: { plan: 'enterprise' } };
    for (const body of [{ identification }, { identification: [identification, { ...identification, group_value: '10413' }] }]) {
      const { data, response } = await ingest.POST('/groupidentify', { body });
      expect(response.status).toBe(200);
      expectDocumentedBody('post', '/groupidentify', 200, data);
    }
  });

  test('POST /attribution as a form and with the event in the query string', async () => {
    const event = { event_type: '[Branch] Install', platform: 'ios' as const, idfa: '8D8AC610-566D-4EF0-9C22-186B2A5ED793' };
    const asForm = await ingest.POST('/attribution', { body: { event } });
    expect(asForm.response.status).toBe(200);
    expectDocumentedBody('post', '/attribution', 200, asForm.data);
    const asQuery = await ingest.POST('/attribution', { params: { query: { event } } });
    expect(asQuery.response.status).toBe(200);
    expectDocumentedBody('post', '/attribution', 200, asQuery.data);
  });

  test('uploadEvents sends every event and sums the answers', async () => {
    const many = Array.from({ length: 4500 }, (_, i) => ({ event_type: 'Tick', user_id: `user-${i % 40}`, insert_id: `tick-${i}` }));
    const summary = await uploadEvents(ingest, many, { concurrency: 2 });
    expect(summary.requests).toBe(3);
    expect(summary.failures).toEqual([]);
  });
});

describe('app host role', () => {
  test('POST /api/1/ai-feedback/ingest', async () => {
    const { data, response } = await app.POST('/api/1/ai-feedback/ingest', {
      body: {
        source_id: 'src_7Hq2LmN4',
        items: [{ unique_id: 'ticket-1', body: 'The export button does nothing.', user_id: 'alice@example.com' }],
      },
    });
    expect(response.status).toBe(200);
    expectDocumentedBody('post', '/api/1/ai-feedback/ingest', 200, data);
  });

  test('ingestFeedback chunks to 100 items per request', async () => {
    const items = Array.from({ length: 250 }, (_, i) => ({ unique_id: `ticket-${i}`, body: `Feedback ${i}` }));
    const summary = await ingestFeedback(app, 'src_7Hq2LmN4', items);
    expect(summary.requests).toBe(3);
    expect(summary.failures).toEqual([]);
  });
});

describe('experiment host role', () => {
  test('GET /v1/vardata with flag keys, context and tracking headers', async () => {
    const { data, response } = await experiment.GET('/v1/vardata', {
      params: {
        query: { user_id: 'alice@example.com', flag_keys: ['checkout-redesign'], context: { user_properties: { plan: 'pro' } } },
        header: { 'X-Svc-Exp-Track': 'no-track' },
      },
    });
    expect(response.status).toBe(200);
    expectDocumentedBody('get', '/v1/vardata', 200, data);
  });

  test('GET /v1/flags', async () => {
    const { data, response } = await experiment.GET('/v1/flags', { params: { query: { flag_keys: ['checkout-redesign'] } } });
    expect(response.status).toBe(200);
    expectDocumentedBody('get', '/v1/flags', 200, data);
  });
});
