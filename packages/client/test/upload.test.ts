import { describe, expect, it } from 'vitest';
import { ConnectionError, createAppClient, createIngestClient, ingestFeedback, uploadEvents, type EventRecord, type FeedbackItem } from '../src/index.js';
import { fakeFetch, json, utf8Bytes, type Recorded } from './fake-fetch.js';

const apiKey = 'proj-key-123';
const events = (n: number, extra: Partial<EventRecord> = {}): EventRecord[] =>
  Array.from({ length: n }, (_, i) => ({ event_type: 'Page Viewed', device_id: `device-${i}`, ...extra }));
const sentEvents = (call: Recorded): EventRecord[] => JSON.parse(call.body).events;
/** Answers like the upload operations: 200 with the number of events received. */
const accept = (call: Recorded) =>
  json(200, { code: 200, events_ingested: sentEvents(call).length, payload_size_bytes: utf8Bytes(call.body), server_upload_time: 1 });

describe('uploadEvents', () => {
  it('splits 2001 events into requests of 2000 and 1, in order', async () => {
    const fake = fakeFetch(accept);
    const client = createIngestClient({ apiKey, fetch: fake.fetch });
    const input = events(2001);
    const summary = await uploadEvents(client, input);
    expect(fake.calls.map((c) => sentEvents(c).length)).toEqual([2000, 1]);
    expect(fake.calls.flatMap(sentEvents)).toEqual(input);
    expect(fake.calls.every((c) => c.url.pathname === '/batch' && JSON.parse(c.body).api_key === apiKey)).toBe(true);
    expect(summary).toMatchObject({ requests: 2, eventsIngested: 2001, failures: [] });
    expect(summary.payloadBytes).toBe(fake.calls.reduce((sum, c) => sum + utf8Bytes(c.body), 0));
  });

  it('splits by serialized size so that no request exceeds 20 MB', async () => {
    const fake = fakeFetch(accept);
    const client = createIngestClient({ apiKey, fetch: fake.fetch });
    // 30 events of ~1 MB each (multi-byte characters, so bytes ≠ string length): ~30 MB in total.
    const big = 'é'.repeat(500_000);
    const input = events(30, { event_properties: { blob: big } });
    const summary = await uploadEvents(client, input, { path: '/2/httpapi' });
    const sizes = fake.calls.map((c) => utf8Bytes(c.body));
    expect(fake.calls.length).toBe(2);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(20_000_000);
    expect(sizes.reduce((a, b) => a + b)).toBeGreaterThan(20_000_000);
    expect(fake.calls.every((c) => c.url.pathname === '/2/httpapi')).toBe(true);
    expect(fake.calls.flatMap(sentEvents).map((e) => e.device_id)).toEqual(input.map((e) => e.device_id));
    expect(summary.eventsIngested).toBe(30);
    expect(summary.payloadBytes).toBe(sizes.reduce((a, b) => a + b));
  });

  it('honours a smaller maxBytesPerRequest exactly', async () => {
    const fake = fakeFetch(accept);
    const client = createIngestClient({ apiKey, fetch: fake.fetch });
    const input = events(100, { event_properties: { text: 'x'.repeat(200) } });
    await uploadEvents(client, input, { maxBytesPerRequest: 5_000, min_id_length: 3 });
    const sizes = fake.calls.map((c) => utf8Bytes(c.body));
    expect(Math.max(...sizes)).toBeLessThanOrEqual(5_000);
    expect(Math.max(...sizes)).toBeGreaterThan(5_000 - 300); // batches are filled, not just split
    expect(fake.calls.every((c) => JSON.parse(c.body).options?.min_id_length === 3)).toBe(true);
  });

  it('halves a batch answered with 413 and sends each half', async () => {
    const fake = fakeFetch((call) =>
      sentEvents(call).length > 500 ? json(413, { code: 413, error: 'Payload too large' }) : accept(call),
    );
    const client = createIngestClient({ apiKey, fetch: fake.fetch });
    const input = events(1200);
    const summary = await uploadEvents(client, input);
    expect(fake.calls.map((c) => sentEvents(c).length)).toEqual([1200, 600, 300, 300, 600, 300, 300]);
    expect(summary).toMatchObject({ requests: 7, eventsIngested: 1200, failures: [] });
    const delivered = fake.calls.filter((c) => sentEvents(c).length <= 500).flatMap(sentEvents);
    expect(delivered).toEqual(input);
  });

  it('reports a single event that is still too large as a failure with its index', async () => {
    const fake = fakeFetch((call) =>
      sentEvents(call).some((e) => e.event_type === 'huge') ? json(413, { code: 413, error: 'Payload too large' }) : accept(call),
    );
    const client = createIngestClient({ apiKey, fetch: fake.fetch });
    const input = events(4);
    input[2] = { event_type: 'huge', user_id: 'user-2' };
    const summary = await uploadEvents(client, input);
    expect(summary.eventsIngested).toBe(3);
    expect(summary.failures).toEqual([
      { status: 413, error: { code: 413, error: 'Payload too large' }, indexes: [2], eventCount: 1, attempts: 1 },
    ]);
  });

  it('waits and retries after 429', async () => {
    const fake = fakeFetch((call, i) =>
      i < 2 ? json(429, { code: 429, error: 'Too many requests for some devices and users', eps_threshold: 1000 }) : accept(call),
    );
    const client = createIngestClient({ apiKey, fetch: fake.fetch });
    const started = Date.now();
    const summary = await uploadEvents(client, events(10), { retryDelayMs: 40 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(75);
    expect(summary).toMatchObject({ requests: 3, eventsIngested: 10, failures: [] });
  });

  it("waits what the answer's Retry-After says rather than retryDelayMs, and a backoff by retry otherwise", async () => {
    const throttled = json(429, { code: 429, error: 'Too many requests for some devices and users' }, { 'Retry-After': '0.05' });
    const fake = fakeFetch((call, i) => (i === 0 ? throttled : i === 1 ? json(503, { code: 503, error: 'Unavailable' }) : accept(call)));
    const client = createIngestClient({ apiKey, fetch: fake.fetch });
    const waits: [number | null, number][] = [];
    const backoff = (retry: number) => 10 * 2 ** retry;
    const summary = await uploadEvents(client, events(3), { retryDelayMs: backoff, onRetry: ({ status }, waitMs) => waits.push([status, waitMs]) });
    expect(waits).toEqual([[429, 50], [503, 20]]);
    expect(summary).toMatchObject({ requests: 3, eventsIngested: 3, failures: [] });
  });

  it("retries a silenced device's 400 only when asked to", async () => {
    const silenced = { code: 400, error: 'Device is silenced', silenced_devices: ['device-0'], silenced_events: [0] };
    const answers = (call: Recorded, i: number) => (i === 0 ? json(400, silenced) : accept(call));
    const plain = fakeFetch(answers);
    expect((await uploadEvents(createIngestClient({ apiKey, fetch: plain.fetch }), events(2), { retryDelayMs: 1 })).failures).toMatchObject([{ status: 400, indexes: [0, 1] }]);
    const retrying = fakeFetch(answers);
    const summary = await uploadEvents(createIngestClient({ apiKey, fetch: retrying.fetch }), events(2), { retryDelayMs: 1, retrySilenced: true });
    expect(summary).toMatchObject({ requests: 2, eventsIngested: 2, failures: [] });
  });

  it('gives up after maxRetries and reports the 429 body', async () => {
    const body = { code: 429, error: 'Too many requests for some devices and users', eps_threshold: 1000, throttled_events: [0] };
    const fake = fakeFetch(() => json(429, body));
    const client = createIngestClient({ apiKey, fetch: fake.fetch });
    const summary = await uploadEvents(client, events(3), { retryDelayMs: 1, maxRetries: 2 });
    expect(fake.calls).toHaveLength(3);
    expect(summary.requests).toBe(3);
    expect(summary.eventsIngested).toBe(0);
    expect(summary.payloadBytes).toBe(0);
    expect(summary.failures).toEqual([{ status: 429, error: body, indexes: [0, 1, 2], eventCount: 3, attempts: 3 }]);
  });

  it('does not retry other client errors', async () => {
    const fake = fakeFetch(() => json(400, { code: 400, error: 'Invalid', events_with_missing_fields: { event_type: [0] } }));
    const client = createIngestClient({ apiKey, fetch: fake.fetch });
    const summary = await uploadEvents(client, events(2), { retryDelayMs: 1 });
    expect(fake.calls).toHaveLength(1);
    expect(summary.failures[0]).toMatchObject({ status: 400, indexes: [0, 1], eventCount: 2 });
  });

  it('with resendValid, events a 400 names fail alone and the others are sent again', async () => {
    const fake = fakeFetch((call) => {
      const sent = sentEvents(call);
      const bad = sent.flatMap((event, index) => (event.event_type === 'bad' ? [index] : []));
      return bad.length > 0 ? json(400, { code: 400, error: 'Invalid field values on some events', events_with_invalid_fields: { event_type: bad } }) : accept(call);
    });
    const client = createIngestClient({ apiKey, fetch: fake.fetch });
    const input = [...events(3), ...events(1, { event_type: 'bad' }), ...events(2)];
    const summary = await uploadEvents(client, input, { resendValid: true });
    expect(fake.calls.map((call) => sentEvents(call).length)).toEqual([6, 5]);
    expect(summary.eventsIngested).toBe(5);
    expect(summary.failures).toEqual([expect.objectContaining({ status: 400, indexes: [3], eventCount: 1 })]);
    // Without it the service's answer is the whole request's.
    const whole = await uploadEvents(client, input);
    expect(whole.failures).toEqual([expect.objectContaining({ status: 400, indexes: [0, 1, 2, 3, 4, 5] })]);
  });

  it('reports network errors after retries instead of throwing', async () => {
    let calls = 0;
    const failing = (async () => {
      calls++;
      throw new TypeError('fetch failed');
    }) as typeof fetch;
    const client = createIngestClient({ apiKey, fetch: failing });
    const summary = await uploadEvents(client, events(2), { retryDelayMs: 1, maxRetries: 1 });
    expect(calls).toBe(2);
    expect(summary.failures).toHaveLength(1);
    expect(summary.failures[0]).toMatchObject({ status: null, indexes: [0, 1], attempts: 2 });
    expect(summary.failures[0]!.error).toBeInstanceOf(ConnectionError);
    expect((summary.failures[0]!.error as ConnectionError).cause).toBeInstanceOf(TypeError);
  });

  it('sends one request at a time by default and at most `concurrency` at once otherwise', async () => {
    const sequential = fakeFetch(accept);
    await uploadEvents(createIngestClient({ apiKey, fetch: sequential.fetch }), events(60), { maxEventsPerRequest: 10 });
    expect(sequential.calls).toHaveLength(6);
    expect(sequential.maxInFlight).toBe(1);

    const parallel = fakeFetch(async (call) => {
      await new Promise((resolve) => setTimeout(resolve, 10));
      return accept(call);
    });
    const summary = await uploadEvents(createIngestClient({ apiKey, fetch: parallel.fetch }), events(60), {
      maxEventsPerRequest: 10,
      concurrency: 3,
    });
    expect(parallel.maxInFlight).toBe(3);
    expect(summary.eventsIngested).toBe(60);
  });

  it('rejects invalid limits', async () => {
    const client = createIngestClient({ apiKey, fetch: fakeFetch().fetch });
    await expect(uploadEvents(client, events(1), { concurrency: 0 })).rejects.toThrow(RangeError);
  });
});

describe('ingestFeedback', () => {
  const items = (n: number, extra: Partial<FeedbackItem> = {}): FeedbackItem[] =>
    Array.from({ length: n }, (_, i) => ({ unique_id: `ticket-${i}`, body: 'Export times out', ...extra }));
  const sentItems = (call: Recorded): FeedbackItem[] => JSON.parse(call.body).items;

  it('sends 250 items as 100 + 100 + 50 and sums the answers', async () => {
    const fake = fakeFetch((call) => {
      const sent = sentItems(call);
      const bad = sent.filter((item) => item.unique_id.endsWith('7'));
      return json(200, {
        ingested: sent.length - bad.length,
        failed: bad.length,
        errors: bad.map((item) => ({ unique_id: item.unique_id, error: 'email: invalid' })),
      });
    });
    const client = createAppClient({ apiKey: 'a', secretKey: 's', fetch: fake.fetch });
    const summary = await ingestFeedback(client, 'src_1', items(250));
    expect(fake.calls.map((c) => sentItems(c).length)).toEqual([100, 100, 50]);
    expect(fake.calls.every((c) => JSON.parse(c.body).source_id === 'src_1')).toBe(true);
    expect(fake.calls.every((c) => c.headers.get('authorization')?.startsWith('Basic '))).toBe(true);
    expect(summary.requests).toBe(3);
    expect(summary.ingested).toBe(225);
    expect(summary.failed).toBe(25);
    expect(summary.errors).toHaveLength(25);
    expect(summary.errors[0]).toEqual({ unique_id: 'ticket-7', error: 'email: invalid' });
    expect(summary.failures).toEqual([]);
  });

  it('keeps each request within 5 MB', async () => {
    const fake = fakeFetch((call) => json(200, { ingested: sentItems(call).length, failed: 0, errors: [] }));
    const client = createAppClient({ apiKey: 'a', secretKey: 's', fetch: fake.fetch });
    const parts = Array.from({ length: 100 }, (_, i) => ({ unique_id: `p${i}`, body: 'x'.repeat(20_000) }));
    const summary = await ingestFeedback(client, 'src_1', items(6, { conversation_parts: parts }));
    const sizes = fake.calls.map((c) => utf8Bytes(c.body));
    expect(Math.max(...sizes)).toBeLessThanOrEqual(5_000_000);
    expect(fake.calls.length).toBe(3);
    expect(summary.ingested).toBe(6);
  });

  it('reports refused requests with the item indexes', async () => {
    const fake = fakeFetch(() => json(404, { code: 404, error: 'No feedback source with id src_0' }));
    const client = createAppClient({ apiKey: 'a', secretKey: 's', fetch: fake.fetch });
    const summary = await ingestFeedback(client, 'src_0', items(120));
    expect(summary.failures.map((f) => [f.status, f.itemCount, f.indexes[0]])).toEqual([
      [404, 100, 0],
      [404, 20, 100],
    ]);
    expect(summary.ingested).toBe(0);
  });
});
