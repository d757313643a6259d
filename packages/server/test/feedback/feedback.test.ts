// Feedback ingestion against the running server, every answer through Prism.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';
import { postJson } from '../support/http.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness(['app']);
});
afterAll(() => h?.close());

const basic = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });
const ingest = (body: unknown, auth = basic(h.project.api_key, h.project.secret_key)) => postJson(`${h.proxied.app}/api/1/ai-feedback/ingest`, body, auth);
const item = (id: string) => h.server.store.entities.feedbackItem(h.project.app_id, 'test-webhook', id);

test('items are upserted by unique_id and parts appended; item-level problems fail only their item', async () => {
  const first = await ingest({
    source_id: 'test-webhook',
    items: [
      { unique_id: 'ticket-1', body: 'The export is slow', author: 'Ada', email: 'ada@example.com', created_at: '2026-11-20T10:00:00Z', conversation_parts: [{ unique_id: 'p1', body: 'Hi' }] },
      { unique_id: 'ticket-2', body: 'Bad mail', email: 'not-an-address' },
      { unique_id: 'ticket-3' },
    ],
  });
  expect(first.status).toBe(200);
  expect(first.body.ingested).toBe(1);
  expect(first.body.failed).toBe(2);
  expect(first.body.errors.map((e: { unique_id: string }) => e.unique_id)).toEqual(['ticket-2', 'ticket-3']);
  expect(first.body.errors[0].error).toMatch(/^email: /);

  const second = await ingest({ source_id: 'test-webhook', items: [{ unique_id: 'ticket-1', conversation_parts: [{ unique_id: 'p2', body: 'Any news?' }, { unique_id: 'p1', body: 'Hello' }] }] });
  expect(second.body).toEqual({ ingested: 1, failed: 0, errors: [] });
  const stored = await item('ticket-1');
  expect(stored).toMatchObject({ body: 'The export is slow', author: 'Ada', created_at: '2026-11-20T10:00:00Z' });
  expect(stored!.conversation_parts.map((p) => [p.unique_id, p.body])).toEqual([
    ['p1', 'Hello'],
    ['p2', 'Any news?'],
  ]);
  expect(await item('ticket-2')).toBeUndefined();
});

test('request-level problems get 400 with issues; nothing is stored', async () => {
  const answer = await ingest({ items: [{ unique_id: 'ticket-9', body: 'x' }] });
  expect(answer.status).toBe(400);
  expect(answer.body).toEqual({ code: 400, error: 'Invalid request body', issues: [{ path: '/source_id', message: 'is required' }] });
  expect(await item('ticket-9')).toBeUndefined();
});

test('401 without credentials, 403 with wrong ones or a non-webhook source, 404 for an unknown source', async () => {
  const body = { source_id: 'test-webhook', items: [{ unique_id: 'ticket-5', body: 'x' }] };
  // Prism answers a request without credentials itself: the server's own answer is read directly.
  expect(await postJson(`${h.direct}/api/1/ai-feedback/ingest`, body)).toMatchObject({ status: 401, body: { code: 401 } });
  expect((await ingest(body, basic(h.project.api_key, 'wrong-secret'))).status).toBe(403);
  // Another project's key pair is valid but its sources are its own.
  expect((await ingest(body, basic(h.otherProject.api_key, h.otherProject.secret_key))).status).toBe(404);
  expect((await ingest({ ...body, source_id: 'test-integration' })).status).toBe(403);
  const unknown = await ingest({ ...body, source_id: 'no-such-source' });
  expect(unknown.body).toEqual({ code: 404, error: 'No feedback source no-such-source in this project' });
});
