// A user's program with the installed client against a running reference server
// (test/packaging/check.mjs starts it with a reporting budget of 200 per five minutes): a call
// answered, the same call refused as a RateLimitError with its retryAfter, and a user's events
// read page by page with `for await`. Prints the refused request's id for check.mjs to find in
// the server's log.
import assert from 'node:assert/strict';
import { createAppClient, createIngestClient, listUserEvents, RateLimitError, uploadEvents } from '@svc/client';

const { SVC_URL: baseUrl, SVC_API_KEY: apiKey, SVC_SECRET_KEY: secretKey } = process.env;
const app = createAppClient({ apiKey, secretKey, baseUrl, throwOnError: true });
const ingest = createIngestClient({ apiKey, baseUrl });

// 150 days of active users cost 150: the first fits the budget, the second does not.
const users = { params: { query: { start: '20260101', end: '20260530' } } };
const { data, requestId } = await app.GET('/api/2/users', users).withResponse();
assert.ok(Array.isArray(data.data.series), 'active users answered');
assert.match(requestId, /\S/);
let refused;
try {
  await app.GET('/api/2/users', { ...users, maxRetries: 0 });
} catch (error) {
  refused = error;
}
assert.ok(refused instanceof RateLimitError, `a RateLimitError, not ${refused}`);
assert.equal(refused.status, 429);
assert.ok(refused.retryAfter > 0 && refused.retryAfter <= 300, `retryAfter ${refused.retryAfter}`);
assert.match(refused.requestId, /\S/);

// Five events of one user, then read two at a time: three pages.
const time = Date.now() - 60_000;
const events = Array.from({ length: 5 }, (_, i) => ({ user_id: 'packed-user', event_type: 'Packed', time: time + i, insert_id: `packed-${i}` }));
const uploaded = await uploadEvents(ingest, events);
assert.equal(uploaded.failures.length, 0, JSON.stringify(uploaded.failures));
let svcId;
for (let attempt = 0; svcId === undefined && attempt < 30; attempt++) {
  const found = await app.GET('/api/2/usersearch', { params: { query: { user: 'packed-user' } } });
  svcId = found.data.matches[0]?.svc_id;
  if (svcId === undefined) await new Promise((resolve) => setTimeout(resolve, 250));
}
assert.ok(svcId !== undefined, 'the uploaded user is found');
const read = [];
let pages = 0;
for await (const page of listUserEvents(app, { user: svcId, limit: 2, direction: 'earliest' }).withResponse()) {
  pages++;
  read.push(...page.data);
}
assert.deepEqual(read.map((event) => event.event_type), ['Packed', 'Packed', 'Packed', 'Packed', 'Packed']);
assert.equal(pages, 3);
console.log(refused.requestId);
