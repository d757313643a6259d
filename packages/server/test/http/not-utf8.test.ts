// A body that is not UTF-8 is refused in the shape of each operation's documented 400, never
// with a generic body that breaks the operation's spec (send holds every answer to it).
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';
import { send } from '../support/http.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness(['app', 'ingest']);
});
afterAll(() => h?.close());

// "é" in Latin-1 inside JSON: valid JSON bytes, not UTF-8.
const latin1 = (text: string) => Buffer.concat([Buffer.from(text.slice(0, text.indexOf('é'))), Buffer.from([0xe9]), Buffer.from(text.slice(text.indexOf('é') + 1))]);

const post = (path: string, body: Buffer, headers: Record<string, string> = {}) =>
  send(`${h.direct}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${h.project.api_key}:${h.project.secret_key}`).toString('base64')}`, ...headers },
    body,
  });

test('feedback and cohort uploads answer their documented 400 (feedback with its issues)', async () => {
  const feedback = await post('/api/1/ai-feedback/ingest', latin1(JSON.stringify({ source_id: 's', items: [{ unique_id: 'caf', body: 'café' }] })));
  expect(feedback.status).toBe(400);
  expect(feedback.body).toEqual({ code: 400, error: 'Invalid request body', issues: [{ path: '', message: 'body: The request body is not valid UTF-8' }] });
  const cohort = await post('/api/3/cohorts/upload', latin1(JSON.stringify({ name: 'café', app_id: h.project.app_id, id_type: 'BY_USER_ID', owner: 'a@example.com', published: true, ids: ['a'] })));
  expect(cohort.status).toBe(400);
  expect(JSON.stringify(cohort.body)).toMatch(/INVALID_REQUEST.*not valid UTF-8/);
});

test('ingestion and other operations answer 400 in their own shape, saying why', async () => {
  const batch = await post('/batch', latin1(JSON.stringify({ api_key: h.project.api_key, events: [{ event_type: 'café', user_id: 'user-0001' }] })));
  expect(batch.status).toBe(400);
  const annotation = await post('/api/3/annotations', latin1(JSON.stringify({ label: 'café', start: '2026-11-02T10:00Z' })));
  expect(annotation.status).toBe(400);
  expect(annotation.body.error).toMatch(/not valid UTF-8/);
});
