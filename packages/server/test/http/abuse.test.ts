// Hostile and careless input against the running server: user-controlled keys that name
// JavaScript internals, values no store can keep as sent, deep nesting, bombs, bad bytes and
// slow clients. After each, the server keeps serving, and at the end every event it ever
// acknowledged is readable, also after a restart. Every answer is held to the spec.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startServer, type RunningServer, type ServerConfig } from '../../src/server.js';
import type { IssuedDeployment, IssuedProject as Project } from '../../src/shared/tenancy.js';
import { TEST_PRIORITY } from '../support/harness.js';
import { send } from '../support/http.js';

const IDLE_MS = 1_000;
const LIMITS: ServerConfig['connectionLimits'] = { requestMs: 1_500, headersMs: 1_000, idleMs: IDLE_MS, keepAliveMs: 500, checkIntervalMs: 100, maxConnections: 40 };
const TRUSTED_ORIGIN = 'https://dashboard.example.com';

let dataDir: string;
let server: RunningServer;
let project: Project;
let otherProject: Project;
let deployment: IssuedDeployment;
const logged: string[] = [];
/** insert_id of every event the server acknowledged, per project. */
const acknowledged = new Map<number, Set<string>>();

const start = () =>
  startServer({ dataDir, host: '127.0.0.1', port: 0, ...TEST_PRIORITY, loadIntervalMs: 100, connectionLimits: LIMITS, corsOrigins: [TRUSTED_ORIGIN], log: (m) => logged.push(m), logClientErrors: true });

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-abuse-'));
  server = await start();
  const org = server.tenancy.createOrganization('Abuse');
  project = server.tenancy.createProject(org.id, 'Target');
  otherProject = server.tenancy.createProject(org.id, 'Bystander');
  deployment = server.tenancy.createDeployment(project.app_id, 'web');
});
afterAll(async () => {
  await server?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const url = (path: string) => `${server.urls.ingest}${path}`;
let sequence = 0;
const nextId = (prefix: string) => `${prefix}-${++sequence}`;

/** Sends raw JSON text (so that escapes like `\ud800` and numbers like `1e400` reach the server as written). */
const postText = (path: string, text: string, contentType = 'application/json') => send(url(path), { method: 'POST', headers: { 'content-type': contentType }, body: text });

/** Uploads events; remembers them when acknowledged. */
async function upload(events: Record<string, unknown>[], owner: Project = project, path = '/batch') {
  const withIds = events.map((event) => ({ insert_id: nextId('abuse'), ...event }));
  const answer = await postText(path, JSON.stringify({ api_key: owner.api_key, events: withIds }));
  if (answer.status === 200) {
    const ids = acknowledged.get(owner.app_id) ?? new Set();
    for (const event of withIds) ids.add(event.insert_id as string);
    acknowledged.set(owner.app_id, ids);
  }
  return { answer, events: withIds };
}

const storedEvent = async (insertId: string, owner = project) => (await server.store.events(owner.app_id)).find((e) => e.insert_id === insertId);
const INTERNAL_KEYS = ['__proto__', 'constructor', 'hasOwnProperty', 'toString', 'prototype'];
/** An object with every internal-looking key as an own property (JSON.parse makes `__proto__` own). */
const internalKeyed = (value: unknown) => JSON.parse(`{${INTERNAL_KEYS.map((key) => `${JSON.stringify(key)}: ${JSON.stringify(value)}`).join(', ')}}`) as Record<string, unknown>;

describe('keys that name JavaScript internals are data', () => {
  test('$identify operations and plain keys named __proto__, hasOwnProperty, constructor: 200, profile stores them, other projects keep loading', async () => {
    const userId = nextId('user-proto');
    const operations = JSON.parse(
      `{"__proto__": {"polluted": true}, "hasOwnProperty": {"x": 1}, "$set": {"__proto__": {"a": 1}, "constructor": "c", "plan": "pro"}, "$add": {"hasOwnProperty": 2}, "$append": {"toString": "t"}}`,
    ) as Record<string, unknown>;
    const { answer } = await upload([{ event_type: '$identify', user_id: userId, user_properties: operations }]);
    expect(answer.status).toBe(200);
    const { answer: bystander, events } = await upload([{ event_type: 'Bystander event', user_id: nextId('user-bystander') }], otherProject);
    expect(bystander.status).toBe(200);
    expect(await storedEvent(events[0]!.insert_id, otherProject)).toBeDefined();
    const profile = await server.store.userProfile(project.app_id, userId);
    expect(Object.keys(profile!).sort()).toEqual(['__proto__', 'constructor', 'hasOwnProperty', 'plan', 'toString'].sort());
    expect(JSON.parse(JSON.stringify(profile))).toEqual(JSON.parse('{"__proto__": {"a": 1}, "hasOwnProperty": 2, "constructor": "c", "plan": "pro", "toString": ["t"]}'));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test('/groupidentify and $groupidentify with internal keys in group_properties and groups', async () => {
    const form = new URLSearchParams({
      api_key: project.api_key,
      identification: JSON.stringify({ group_type: '__proto__', group_value: 'constructor', group_properties: internalKeyed({ deep: 1 }) }),
    });
    const answer = await postText('/groupidentify', form.toString(), 'application/x-www-form-urlencoded');
    expect(answer.status).toBe(200);
    const { answer: event } = await upload([{ event_type: '$groupidentify', user_id: nextId('user-group'), groups: internalKeyed('g'), group_properties: internalKeyed(1) }]);
    expect(event.status).toBe(200);
    const profile = await server.store.groupProfile(project.app_id, { group_type: '__proto__', group_value: 'constructor' });
    expect(Object.keys(profile!).sort()).toEqual([...INTERNAL_KEYS].sort());
  });

  test('internal keys in every property object of an event are stored as sent', async () => {
    const properties = internalKeyed({ nested: [1, 2] });
    const { answer, events } = await upload([{ event_type: 'Internal keys', user_id: nextId('user-keys'), event_properties: properties, user_properties: properties, groups: internalKeyed('x') }]);
    expect(answer.status).toBe(200);
    const stored = await storedEvent(events[0]!.insert_id);
    expect(Object.keys(stored!.event_properties!).sort()).toEqual([...INTERNAL_KEYS].sort());
    expect(Object.keys(stored!.user_properties!).sort()).toEqual([...INTERNAL_KEYS].sort());
  });

  test('a device_id named __proto__ is throttled and reported like any other', async () => {
    const device = { event_type: 'Spam', device_id: '__proto__' };
    // 30,001 events in the window exceed 1000/s over 30 s.
    for (let i = 0; i < 15; i++) expect((await upload(Array.from({ length: 2000 }, () => device))).answer.status).toBe(200);
    const refused = await upload(Array.from({ length: 1001 }, () => device));
    expect(refused.answer.status).toBe(429);
    expect(Object.keys(refused.answer.body.throttled_devices)).toEqual(['__proto__']);
  });
});

describe('values no store keeps as sent are refused with the documented 400', () => {
  const cases: [string, string, string][] = [
    ['a lone surrogate in user_id', '{"event_type": "x", "user_id": "user-\\ud800-1"}', 'user_id'],
    ['a lone surrogate as a property name', '{"event_type": "x", "user_id": "user-00001", "event_properties": {"\\udc00": 1}}', 'event_properties'],
    ['a lone surrogate in a nested property value', '{"event_type": "x", "user_id": "user-00001", "user_properties": {"$set": {"a": ["\\udbff"]}}}', 'user_properties'],
    ['quantity beyond 32 bits', '{"event_type": "x", "user_id": "user-00001", "price": 1, "quantity": 3e9}', 'quantity'],
    ['event_id beyond 2^53', '{"event_type": "x", "user_id": "user-00001", "event_id": 1e19}', 'event_id'],
    ['a revenue beyond a double', '{"event_type": "x", "user_id": "user-00001", "revenue": 1e400}', 'revenue'],
    ['a property beyond a double', '{"event_type": "x", "user_id": "user-00001", "event_properties": {"n": -1e999}}', 'event_properties'],
    ['price × quantity overflowing', '{"event_type": "x", "user_id": "user-00001", "price": 1e308, "quantity": 10}', 'price'],
  ];
  for (const [name, event, field] of cases) {
    test(name, async () => {
      const good = `{"event_type": "fine", "user_id": "user-00001", "insert_id": "${nextId('refused')}"}`;
      for (const path of ['/batch', '/2/httpapi']) {
        const answer = await postText(path, `{"api_key": "${project.api_key}", "events": [${good}, ${event}]}`);
        expect(answer.status).toBe(400);
        expect(answer.body.events_with_invalid_fields).toEqual({ [field]: [1] });
      }
      expect(await storedEvent(JSON.parse(good).insert_id)).toBeUndefined();
    });
  }

  test('a body that is not UTF-8 gets 400; stored strings keep every character', async () => {
    const bad = Buffer.concat([Buffer.from(`{"api_key": "${project.api_key}", "events": [{"event_type": "`), Buffer.from([0xc3, 0x28]), Buffer.from('", "user_id": "user-00001"}]}')]);
    const answer = await send(url('/batch'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: bad });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatch(/UTF-8/);
    const text = 'naïve 😀 \u0000 \u2028 \uffff';
    const { answer: ok, events } = await upload([{ event_type: text, user_id: `user-${text}`, event_properties: { [text]: text } }]);
    expect(ok.status).toBe(200);
    const stored = await storedEvent(events[0]!.insert_id);
    expect([stored!.event_type, stored!.user_id, stored!.event_properties]).toEqual([text, `user-${text}`, { [text]: text }]);
  });

  test('integers and doubles at their bounds are stored exactly', async () => {
    const { answer, events } = await upload([{ event_type: 'bounds', user_id: nextId('user-bounds'), quantity: 2 ** 31 - 1, event_id: Number.MAX_SAFE_INTEGER, price: 1e-300, event_properties: { max: Number.MAX_VALUE } }]);
    expect(answer.status).toBe(200);
    const stored = await storedEvent(events[0]!.insert_id);
    expect(stored).toMatchObject({ quantity: 2 ** 31 - 1, event_id: Number.MAX_SAFE_INTEGER, price: 1e-300, event_properties: { max: Number.MAX_VALUE } });
  });
});

describe('nesting: 40 levels on every property object, never a 500', () => {
  /** JSON text of objects nested `depth` deep, built without recursion (the deepest are too deep for it). */
  const nestedText = (depth: number) => `${'{"next": '.repeat(depth - 1)}{"leaf": 1}${'}'.repeat(depth - 1)}`;
  const form = (path: string, fields: Record<string, string>) => postText(path, new URLSearchParams({ api_key: project.api_key, ...fields }).toString(), 'application/x-www-form-urlencoded');
  const event = (fields: string) => `{"api_key": "${project.api_key}", "events": [{"user_id": "user-00001", ${fields}}]}`;
  const paths: [string, (properties: string) => ReturnType<typeof send>][] = [
    ['/batch event_properties', (p) => postText('/batch', event(`"event_type": "deep", "event_properties": ${p}`))],
    ['/2/httpapi user_properties', (p) => postText('/2/httpapi', event(`"event_type": "$identify", "user_properties": ${p}`))],
    ['$groupidentify group_properties', (p) => postText('/batch', event(`"event_type": "$groupidentify", "groups": {"org": "a"}, "group_properties": ${p}`))],
    ['/groupidentify group_properties', (p) => form('/groupidentify', { identification: `[{"group_type": "org", "group_value": "deep", "group_properties": ${p}}]` })],
    ['/attribution user_properties', (p) => form('/attribution', { event: `{"event_type": "[Partner] install", "platform": "ios", "idfa": "idfa-deep", "user_properties": ${p}}` })],
  ];
  for (const [name, send] of paths) {
    test(name, async () => {
      expect((await send(nestedText(40))).status).toBe(200);
      for (const depth of [41, 2_000, 50_000]) expect((await send(nestedText(depth))).status).toBe(400);
    });
  }
});

describe('bodies: bombs, oversize, chunks', () => {
  test('a gzip bomb is cut off at the inflated limit with 413', async () => {
    // A server of its own with the default connection limits: inflating the 20 MB the limit allows
    // took longer than the 1.5 s request budget of the slow-client tests on a loaded 2-core machine.
    const dir = mkdtempSync(join(tmpdir(), 'svc-abuse-bomb-'));
    const roomy = await startServer({ dataDir: dir, host: '127.0.0.1', port: 0, ...TEST_PRIORITY });
    try {
      const target = roomy.tenancy.createProject(roomy.tenancy.createOrganization('Bombed').id, 'Target');
      const bomb = gzipSync(Buffer.concat([Buffer.from(`{"api_key": "${target.api_key}", "events": [{"event_type": "x", "user_id": "user-00001", "event_properties": {"pad": "`), Buffer.alloc(200 * 1024 * 1024, 0x61), Buffer.from('"}}]}')]));
      expect(bomb.length).toBeLessThan(1024 * 1024);
      const answer = await send(`${roomy.urls.ingest}/batch`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: bomb });
      expect(answer.status).toBe(413);
    } finally {
      await roomy.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a chunked body without Content-Length is read whole', async () => {
    const text = JSON.stringify({ api_key: project.api_key, events: [{ event_type: 'Chunked', user_id: 'user-chunked', insert_id: nextId('chunked') }] });
    const body = new ReadableStream({
      start(controller) {
        for (let i = 0; i < text.length; i += 7) controller.enqueue(new TextEncoder().encode(text.slice(i, i + 7)));
        controller.close();
      },
    });
    const answer = await send(url('/batch'), { method: 'POST', headers: { 'content-type': 'application/json' }, body, duplex: 'half' } as RequestInit);
    expect(answer.status).toBe(200);
    acknowledged.get(project.app_id)!.add(JSON.parse(text).events[0].insert_id);
  });

  test('a beacon (text/plain JSON) is accepted on /batch and /2/httpapi', async () => {
    for (const path of ['/batch', '/2/httpapi']) {
      const insertId = nextId('beacon');
      const answer = await postText(path, JSON.stringify({ api_key: project.api_key, events: [{ event_type: 'Beacon', user_id: 'user-beacon', insert_id: insertId }] }), 'text/plain;charset=UTF-8');
      expect(answer.status).toBe(200);
      acknowledged.get(project.app_id)!.add(insertId);
    }
  });
});

describe('slow and greedy clients', () => {
  /** Opens a raw connection, writes `text` (then whatever `more` writes), and resolves with what the server answered by the time it closed. */
  function rawExchange(text: string, more?: (socket: net.Socket) => void): Promise<{ answer: string; closedAfterMs: number }> {
    const started = Date.now();
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(new URL(server.urls.ingest!).port), '127.0.0.1', () => {
        socket.write(text);
        more?.(socket);
      });
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk.toString()));
      socket.on('close', () => resolve({ answer, closedAfterMs: Date.now() - started }));
      socket.on('error', reject);
      setTimeout(() => reject(new Error('the server kept a stalled connection open')), 10_000).unref();
    });
  }

  test('headers that never finish are cut off', async () => {
    const { closedAfterMs } = await rawExchange('POST /batch HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    expect(closedAfterMs).toBeLessThan(5_000);
  });

  test('a body announced and never sent is cut off', async () => {
    const { closedAfterMs } = await rawExchange('POST /batch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"api_key": ');
    expect(closedAfterMs).toBeLessThan(5_000);
  });

  test('a body dripping in too slowly to finish in time gets 408', async () => {
    const { answer, closedAfterMs } = await rawExchange('POST /batch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n', (socket) => {
      const drip = setInterval(() => (socket.writable ? socket.write(' ') : clearInterval(drip)), 200);
      socket.on('close', () => clearInterval(drip));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({ code: 408, error: 'Request timeout: the request was not received in time', request_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(closedAfterMs).toBeLessThan(5_000);
  });

  test('an answer that takes longer than the idle limit still arrives', async () => {
    // The engine's process stopped for twice the idle limit: the question waits for it.
    const engine = readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .find((pid) => {
        try {
          const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
          return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === process.pid && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('engine-child');
        } catch {
          return false;
        }
      });
    expect(engine, 'the engine process').toBeDefined();
    const auth = `Basic ${Buffer.from(`${project.api_key}:${project.secret_key}`).toString('base64')}`;
    process.kill(Number(engine), 'SIGSTOP');
    const resume = setTimeout(() => process.kill(Number(engine), 'SIGCONT'), 2 * IDLE_MS);
    try {
      const answer = await send(`${server.urls.app}/api/2/events/segmentation?start=20261101&end=20261102&e=${encodeURIComponent('{"event_type":"_all"}')}`, { headers: { authorization: auth } });
      expect(answer.status).toBe(200);
    } finally {
      clearTimeout(resume);
      process.kill(Number(engine), 'SIGCONT');
    }
  });

  test('a request line and headers over 16 KiB get the documented 431 in the service-wide error body', async () => {
    const context = encodeURIComponent(JSON.stringify({ user_id: 'u', user_properties: { note: 'x'.repeat(9_000) } }));
    for (const [method, path, headers] of [
      ['GET', `/v1/vardata?context=${context}`, { 'x-padding': 'y'.repeat(9_000) }],
      ['GET', '/v1/vardata', { 'x-large': 'z'.repeat(17_000) }],
      ['POST', '/batch', { 'x-large': 'z'.repeat(17_000) }],
    ] as const) {
      const answer = await send(url(path), { method, headers });
      expect(answer.status).toBe(431);
      expect(answer.body).toEqual({ code: 431, error: 'Request header fields too large: the request line and headers may take at most 16 KiB' });
    }
  });

  test('connections beyond the cap are refused while the others are served', async () => {
    const sockets = await Promise.all(
      Array.from({ length: LIMITS!.maxConnections! + 10 }, () => new Promise<net.Socket>((ok) => {
        const socket = net.connect(Number(new URL(server.urls.ingest!).port), '127.0.0.1', () => ok(socket));
        socket.on('error', () => undefined);
      })),
    );
    await new Promise((r) => setTimeout(r, 200));
    expect(sockets.filter((s) => s.destroyed || s.readyState !== 'open').length).toBeGreaterThanOrEqual(10);
    for (const socket of sockets) socket.destroy();
    await new Promise((r) => setTimeout(r, 200));
    expect((await upload([{ event_type: 'After the crowd', user_id: 'user-crowd' }])).answer.status).toBe(200);
  });
});

describe('journal records the store refuses are quarantined, never blocking others', () => {
  test('a bad record among good ones: the good ones load, the bad one is kept aside and logged', async () => {
    const good = { app_id: otherProject.app_id, event_type: 'Loaded anyway', user_id: 'user-quarantine', time: 1, server_upload_time: 1 };
    // Written straight to the store, past validation: quantity does not fit the column.
    await server.store.append([
      { ...good, insert_id: 'quarantine-before' },
      { ...good, insert_id: 'quarantine-bad', quantity: 3e9 },
      { ...good, insert_id: 'quarantine-after' },
    ] as never);
    const events = await server.store.events(otherProject.app_id);
    expect(events.map((e) => e.insert_id)).toEqual(expect.arrayContaining(['quarantine-before', 'quarantine-after']));
    expect(events.map((e) => e.insert_id)).not.toContain('quarantine-bad');
    expect(readdirSync(join(dataDir, 'journal', 'quarantine'))).toHaveLength(1);
    expect(logged.some((line) => /quarantined a journal record/.test(line))).toBe(true);
  });
});

test('a 4xx answer is logged with its request id, without the query string', async () => {
  const answer = await send(`${url('/batch')}?api_key=hidden`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': 'trace-4xx-1' }, body: '{}' });
  expect(answer.status).toBe(400);
  expect(logged).toContain('request trace-4xx-1: POST /batch answered 400');
  expect(logged.some((line) => line.includes('hidden'))).toBe(false);
});

describe('browsers (CORS)', () => {
  const preflight = (base: string, path: string, origin: string) =>
    fetch(`${base}${path}`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' } });

  test('ingestion and evaluation: any origin, preflights answered, answers readable', async () => {
    const answer = await preflight(server.urls.ingest!, '/batch', 'https://shop.example.org');
    expect(answer.status).toBe(204);
    expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    expect(answer.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS');
    expect(answer.headers.get('access-control-allow-headers')).toBe('content-type');
    const post = await send(url('/batch'), { method: 'POST', headers: { origin: 'https://shop.example.org', 'content-type': 'application/json' }, body: '{}' });
    expect(post.status).toBe(400);
    expect(post.headers.get('access-control-allow-origin')).toBe('*');
    // The page can read the request id and Retry-After, of errors and of answers.
    expect(post.headers.get('access-control-expose-headers')).toBe('X-Request-Id, Retry-After');
    const flags = await send(`${server.urls.experiment}/sdk/v2/flags`, { headers: { origin: 'https://shop.example.org', authorization: `Api-Key ${deployment.key}` } });
    expect(flags.headers.get('access-control-allow-origin')).toBe('*');
    expect(flags.status).toBe(200);
    expect(flags.headers.get('access-control-expose-headers')).toBe('X-Request-Id, Retry-After');
  });

  test('app-host operations: only configured origins, with credentials', async () => {
    expect((await preflight(server.urls.app!, '/api/2/events/list', 'https://evil.example.org')).status).toBe(403);
    const trusted = await preflight(server.urls.app!, '/api/2/events/list', TRUSTED_ORIGIN);
    expect(trusted.status).toBe(204);
    expect(trusted.headers.get('access-control-allow-origin')).toBe(TRUSTED_ORIGIN);
    expect(trusted.headers.get('access-control-allow-credentials')).toBe('true');
  });

  test('a method a path does not serve gets 405 with Allow', async () => {
    const answer = await send(url('/batch'));
    expect(answer.status).toBe(405);
    expect(answer.headers.get('allow')).toBe('POST, OPTIONS');
    expect((await send(url('/no-such-path'))).status).toBe(404);
  });
});

test('afterwards: a normal batch answers 200 and every acknowledged event is readable, also after a restart', async () => {
  expect((await upload([{ event_type: 'Still serving', user_id: 'user-final' }])).answer.status).toBe(200);
  const check = async () => {
    for (const [appId, ids] of acknowledged) {
      const stored = new Set((await server.store.events(appId)).map((e) => e.insert_id));
      expect([...ids].filter((id) => !stored.has(id))).toEqual([]);
    }
  };
  await check();
  await server.close();
  // A segment left by a crash, with a torn last line that was never acknowledged.
  writeFileSync(join(dataDir, 'journal', '000000000000001-000000.ndjson'), `${JSON.stringify({ app_id: project.app_id, event_type: 'Left behind', insert_id: 'left-behind', time: 1, server_upload_time: 1 })}\n{"app_id": 1, "event_ty`);
  server = await start();
  await check();
  expect(await storedEvent('left-behind')).toBeDefined();
  // A restart and every project's events read twice: 34 s once on a loaded 2-core machine.
}, 120_000);
