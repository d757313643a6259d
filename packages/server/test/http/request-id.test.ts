// X-Request-Id on every answer (send, in ../support/http.ts, checks it on every answer of every
// test, and that an error's JSON body repeats it): the caller's own when usable, else a new one;
// answers Node gives before any route carry it too.
import net from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';
import { send } from '../support/http.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness([]);
});
afterAll(() => h?.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const authorization = () => `Basic ${Buffer.from(`${h.project.api_key}:${h.project.secret_key}`).toString('base64')}`;

test('a new UUID on each answer when the caller sends none; the caller’s own echoed when usable, else replaced', async () => {
  const [first, second] = await Promise.all([0, 1].map(() => send(`${h.direct}/api/2/events/list`, { headers: { authorization: authorization() } })));
  expect(first!.status).toBe(200);
  expect(first!.headers.get('x-request-id')).toMatch(UUID);
  expect(second!.headers.get('x-request-id')).not.toBe(first!.headers.get('x-request-id'));
  const echoed = await send(`${h.direct}/api/2/events/list`, { headers: { authorization: authorization(), 'x-request-id': 'trace-42:abc/DEF' } });
  expect(echoed.headers.get('x-request-id')).toBe('trace-42:abc/DEF');
  // Latin-1 bytes for the last: a header cannot carry other text.
  for (const unusable of ['has space', 'x'.repeat(129), '\xe9t\xe9']) {
    const replaced = await send(`${h.direct}/api/2/events/list`, { headers: { authorization: authorization(), 'x-request-id': unusable } });
    expect(replaced.headers.get('x-request-id')).toMatch(UUID);
  }
});

test('errors carry it in the body: 401, 400, 404 and 405 (send compares body and header)', async () => {
  const unauthorized = await send(`${h.direct}/api/2/events/list`, { headers: { 'x-request-id': 'caller-401' } });
  expect(unauthorized.status).toBe(401);
  expect(unauthorized.headers.get('x-request-id')).toBe('caller-401');
  const invalid = await send(`${h.direct}/api/2/events/segmentation?e=not-json&start=20261101&end=20261101`, { headers: { authorization: authorization() } });
  expect(invalid.status).toBe(400);
  const raw = await fetch(`${h.direct}/no/such/operation`, { headers: { 'x-request-id': 'caller-404' } });
  expect(raw.status).toBe(404);
  expect(raw.headers.get('x-request-id')).toBe('caller-404');
  expect(((await raw.json()) as { request_id: string }).request_id).toBe('caller-404');
  expect((await send(`${h.direct}/api/2/events/list`, { method: 'DELETE' })).status).toBe(405);
});

test('an answer Node gives before any route (431) has one in its header and body', async () => {
  const port = Number(new URL(h.direct).port);
  const answer = await new Promise<string>((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(`GET /api/2/events/list HTTP/1.1\r\nHost: x\r\nX-Large: ${'z'.repeat(17_000)}\r\n\r\n`));
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString()));
    socket.on('close', () => resolve(text));
    socket.on('error', () => undefined);
  });
  const id = /\r\nX-Request-Id: ([^\r]+)\r\n/i.exec(answer)?.[1];
  expect(id).toMatch(UUID);
  expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).request_id).toBe(id);
});
