import { readFileSync } from 'node:fs';
import { deflateSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  NotFoundError,
  ResponseError,
  createAppClient,
  decodeReplayFile,
  downloadReplay,
  listReplays,
  type RecordedEvent,
  type SessionReplay,
} from '../src/index.js';
import { fakeFetch, json } from './fake-fetch.js';

const replayId = 'C8F9E604-F01A-4BD9-95C6-8E5357DF265D/1763805311000';
const basic = `Basic ${Buffer.from('api:secret').toString('base64')}`;

const replay = (n: number): SessionReplay => ({
  replay_id: `device-${n}/17638053${n}`,
  session_id: `17638053${n}`,
  device_id: `device-${n}`,
  svc_id: 502277640000 + n,
  start_time: `2026-11-22T09:${String(n).padStart(2, '0')}:00Z`,
  end_time: `2026-11-22T10:${String(n).padStart(2, '0')}:00Z`,
  retention_in_days: 90,
});

const events = (file: number, count = 2): RecordedEvent[] =>
  Array.from({ length: count }, (_, i) => ({ type: 3, data: { source: 2, id: file * 100 + i, label: 'Grüße €' }, timestamp: 1763805312000 + file * 1000 + i }));

/** A version 3 file: gzip of the JSON array of events. */
const fileV3 = (list: RecordedEvent[]) => gzipSync(JSON.stringify(list));
/** A version 2 file: gzip of a JSON array of latin1 strings, each the zlib-compressed JSON of one event. */
const fileV2 = (list: RecordedEvent[]) => gzipSync(JSON.stringify(list.map((event) => deflateSync(JSON.stringify(event)).toString('latin1'))));

const app = (fetch: typeof globalThis.fetch) => createAppClient({ apiKey: 'api', secretKey: 'secret', fetch });

describe('listReplays', () => {
  it('yields every replay of every page, passing next_page_token as page_token with the same filters', async () => {
    const pages: Record<string, { session_replays: SessionReplay[]; next_page_token: string | null }> = {
      '': { session_replays: [replay(1), replay(2)], next_page_token: 'token-a' },
      'token-a': { session_replays: [replay(3)], next_page_token: 'token-b' },
      'token-b': { session_replays: [], next_page_token: null },
    };
    const fake = fakeFetch((request) => json(200, pages[request.url.searchParams.get('page_token') ?? '']));
    const seen: string[] = [];
    for await (const item of listReplays(app(fake.fetch), { start_time: '2026-11-20T00:00:00Z', page_size: 2, sort_order: 'desc' })) {
      seen.push(item.replay_id);
    }
    expect(seen).toEqual([replay(1), replay(2), replay(3)].map((r) => r.replay_id));
    expect(fake.calls.map((call) => call.url.searchParams.get('page_token'))).toEqual([null, 'token-a', 'token-b']);
    for (const call of fake.calls) {
      expect(call.url.pathname).toBe('/api/1/session-replays');
      expect(call.headers.get('authorization')).toBe(basic);
      expect(call.url.searchParams.get('sort_order')).toBe('desc');
      expect(call.url.searchParams.get('start_time')).toBe('2026-11-20T00:00:00Z');
      expect(call.url.searchParams.get('page_size')).toBe('2');
    }
  });

  it('fetches only the pages that are read', async () => {
    const fake = fakeFetch(() => json(200, { session_replays: [replay(1), replay(2)], next_page_token: 'more' }));
    for await (const item of listReplays(app(fake.fetch))) {
      expect(item.replay_id).toBe(replay(1).replay_id);
      break;
    }
    expect(fake.calls).toHaveLength(1);
  });

  it('throws a ResponseError with the status and body of a refused page', async () => {
    const body = { code: 400, error: 'page_token was issued for sort_order asc; use the same sort_order on every page' };
    const fake = fakeFetch((_request, index) => (index === 0 ? json(200, { session_replays: [replay(1)], next_page_token: 't' }) : json(400, body)));
    const seen: SessionReplay[] = [];
    const reading = (async () => {
      for await (const item of listReplays(app(fake.fetch))) seen.push(item);
    })();
    await expect(reading).rejects.toThrow(ResponseError);
    await reading.catch((error: ResponseError) => {
      expect(error.status).toBe(400);
      expect(error.body).toEqual(body);
      expect(error.message).toContain('sort_order asc');
    });
    expect(seen).toHaveLength(1);
  });

  it('stops with an error when the service repeats a page token', async () => {
    const fake = fakeFetch(() => json(200, { session_replays: [], next_page_token: 'same' }));
    const reading = (async () => {
      for await (const item of listReplays(app(fake.fetch))) void item;
    })();
    await expect(reading).rejects.toThrow(/same next_page_token twice/);
    expect(fake.calls).toHaveLength(2);
  });
});

/** A listing of file links in pages of `perPage`, and a storage fetch serving `contents` by link. */
function replayServer(contents: Uint8Array[], perPage: number, fileDelay: (index: number) => number = () => 0) {
  const links = contents.map((_, i) => `https://replays.example.com/p/1/${i}.json.gz?X-Signature=s${i}`);
  const api = fakeFetch((request) => {
    const start = Number(request.url.searchParams.get('page_token') ?? 0);
    const end = start + perPage;
    return json(200, { files: links.slice(start, end), next_page_token: end < links.length ? String(end) : null });
  });
  const storage = fakeFetch(async (request) => {
    const index = links.indexOf(request.url.href);
    await new Promise((resolve) => setTimeout(resolve, fileDelay(index)));
    return new Response(new Uint8Array(contents[index]!), { status: 200, headers: { 'Content-Type': 'application/octet-stream' } });
  });
  return { api, storage };
}

describe('downloadReplay', () => {
  it('downloads every file of every page in order and concatenates the version 3 events', async () => {
    const files = [events(0), events(1, 3), events(2), events(3, 1), events(4)];
    // Later files answer first: the order must still be the files' order.
    const { api, storage } = replayServer(files.map(fileV3), 2, (i) => (5 - i) * 3);
    const all = await downloadReplay(app(api.fetch), replayId, { fetch: storage.fetch, concurrency: 3 });
    expect(all).toEqual(files.flat());
    expect(api.calls.map((call) => call.url.searchParams.get('page_token'))).toEqual([null, '2', '4']);
    const [first] = api.calls;
    expect(first!.url.pathname).toBe('/api/1/session-replays/files');
    expect(first!.url.search).toContain('replay_id=C8F9E604-F01A-4BD9-95C6-8E5357DF265D%2F1763805311000');
    expect(first!.url.searchParams.get('version')).toBe('3');
    expect(first!.headers.get('authorization')).toBe(basic);
    expect(storage.calls).toHaveLength(5);
    expect(storage.maxInFlight).toBeLessThanOrEqual(3);
    for (const call of storage.calls) expect(call.headers.get('authorization')).toBeNull();
  });

  it('unpacks version 2 files: gunzip, then latin1 → zlib inflate → JSON for each event', async () => {
    const files = [events(0, 3), events(1, 2)];
    const { api, storage } = replayServer(files.map(fileV2), 1);
    const all = await downloadReplay(app(api.fetch), replayId, { version: 2, pageSize: 1, fetch: storage.fetch });
    expect(all).toEqual(files.flat());
    expect(api.calls.map((call) => [call.url.searchParams.get('version'), call.url.searchParams.get('page_size')])).toEqual([
      ['2', '1'],
      ['2', '1'],
    ]);
  });

  it('throws a NotFoundError (a ResponseError) for a replay without data and a ResponseError for a link the storage refuses', async () => {
    const missing = fakeFetch(() => json(404, { code: 404, error: `No session replay data for replay_id ${replayId}` }));
    await expect(downloadReplay(app(missing.fetch), replayId)).rejects.toMatchObject({ name: 'NotFoundError', status: 404 });
    await expect(downloadReplay(app(missing.fetch), replayId)).rejects.toBeInstanceOf(NotFoundError);

    const { api } = replayServer([fileV3(events(0))], 10);
    const expired = fakeFetch(() => new Response('<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>', { status: 403 }));
    const failing = downloadReplay(app(api.fetch), replayId, { fetch: expired.fetch });
    await expect(failing).rejects.toThrow(/event file 0 .*HTTP 403: <Error><Code>AccessDenied/);
  });

  it('refuses a version other than 2 or 3 before asking anything', async () => {
    const fake = fakeFetch();
    await expect(downloadReplay(app(fake.fetch), replayId, { version: 4 as never })).rejects.toThrow(RangeError);
    expect(fake.calls).toHaveLength(0);
  });
});

describe('decodeReplayFile', () => {
  it('reads a file that fetch already inflated (served with Content-Encoding: gzip)', () => {
    const list = events(7);
    expect(decodeReplayFile(new TextEncoder().encode(JSON.stringify(list)), 3)).toEqual(list);
  });

  it('accepts version 2 packed strings that are JSON-encoded once more', () => {
    const list = events(8, 2);
    const packed = list.map((event) => JSON.stringify(deflateSync(JSON.stringify(event)).toString('latin1')));
    expect(packed[0]!.startsWith('"')).toBe(true);
    expect(decodeReplayFile(gzipSync(JSON.stringify(packed)), 2)).toEqual(list);
  });

  it('decodes the version 2 example of the spec', () => {
    const bundle = JSON.parse(
      readSpec('session-replays.json'),
    ) as { paths: Record<string, { get: { responses: Record<string, Record<string, Record<string, { example: unknown }>>> } }> };
    const contents = bundle.paths['/api/1/session-replays/files']!.get.responses['200']!['x-svc-file-contents']!;
    const v2 = gzipSync(JSON.stringify(contents['2']!.example));
    expect(decodeReplayFile(v2, 2)).toEqual([(contents['3']!.example as RecordedEvent[])[0]]);
  });

  it('names the problem of a file that is not what its version says', () => {
    expect(() => decodeReplayFile(gzipSync('{"not":"an array"}'), 3)).toThrow(/not a JSON array/);
    expect(() => decodeReplayFile(gzipSync(JSON.stringify([{ type: 3 }])), 2)).toThrow(/event 0: a version 2 event is a string/);
    expect(() => decodeReplayFile(gzipSync(JSON.stringify(['not zlib'])), 2)).toThrow();
  });
});

function readSpec(name: string): string {
  return readFileSync(new URL(`../../../specs/dist/${name}`, import.meta.url), 'utf8');
}
