// Credentials on every kind of operation: missing or wrong credentials get the status and
// body shape the operation documents (through Prism; without credentials Prism answers by
// itself, so those go to the server directly and are checked against the spec here), and
// only a known caller gets further.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';
import { postForm, send } from '../support/http.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness(['app', 'api']);
});
afterAll(() => h?.close());

const basic = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });

test('a Basic operation of doc 000 (taxonomy): 401 in the taxonomy body without or with wrong keys; 403 for a project without the entitlement', async () => {
  const path = '/api/2/taxonomy/event';
  const missing = await send(`${h.server.urls.app}${path}`);
  expect(missing.status).toBe(401);
  expect(missing.body).toEqual({ success: false, errors: [{ message: expect.stringMatching(/HTTP Basic/) }] });
  const wrong = await send(`${h.proxied.app}${path}`, { headers: basic(h.project.api_key, 'not-the-secret') });
  expect(wrong.status).toBe(401);
  expect(wrong.body.success).toBe(false);
  const known = await send(`${h.proxied.app}${path}`, { headers: basic(h.project.api_key, h.project.secret_key) });
  expect(known.status).toBe(403);
  expect(known.body).toEqual({ success: false, errors: [{ message: 'Taxonomy is available to Enterprise projects only' }] });
});

test('a Basic operation of doc 001 (reporting): 401 with {code, error} for missing and for wrong keys', async () => {
  const path = '/api/2/events/list';
  const missing = await send(`${h.server.urls.app}${path}`);
  expect(missing.status).toBe(401);
  expect(missing.body).toEqual({ code: 401, error: expect.stringMatching(/HTTP Basic/) });
  for (const headers of [basic('unknown-key', 'unknown-secret'), basic(h.otherProject.api_key, h.project.secret_key)]) {
    const answer = await send(`${h.proxied.app}${path}`, { headers });
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual({ code: 401, error: expect.any(String) });
  }
  expect((await send(`${h.proxied.app}${path}`, { headers: basic(h.otherProject.api_key, h.otherProject.secret_key) })).status).toBe(200);
});

test('an api_key operation that documents 401 (user mapping) answers 401, not the ingestion group’s 400', async () => {
  const mapping = JSON.stringify([{ user_id: 'user-00001', global_user_id: 'global-1' }]);
  const missing = await postForm(`${h.proxied.api}/usermap`, { mapping });
  expect(missing.status).toBe(401);
  expect(missing.body).toEqual({ code: 401, error: 'Missing credentials: use the api_key' });
  const wrong = await postForm(`${h.proxied.api}/usermap?api_key=unknown-key`, { mapping });
  expect(wrong.status).toBe(401);
  expect(wrong.body).toEqual({ code: 401, error: 'Invalid API key' });
  const known = await send(`${h.server.urls.api}/usermap?api_key=${h.project.api_key}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ mapping }).toString(),
  });
  expect(known.status).toBe(200);
});

test('the user mapping lookup takes api_key and secret_key as query parameters, its documented alternative to Basic', async () => {
  const lookup = (query: string) => send(`${h.server.urls.app}/api/2/usermap?user_ids=user-00001&${query}`);
  expect((await lookup(`api_key=${h.project.api_key}&secret_key=${h.project.secret_key}`)).status).toBe(200);
  expect((await lookup(`api_key=${h.project.api_key}&secret_key=wrong-secret`)).status).toBe(401);
  const missing = await lookup(`api_key=${h.project.api_key}`);
  expect(missing.status).toBe(401);
  expect(missing.body.error).toMatch(/HTTP Basic .* or the api_key and secret_key query parameters/);
});
