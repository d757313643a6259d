// exportEvents: the range asked for part by part, each zip's hour files (stored or deflated,
// gzipped JSON lines) read in order; 404 parts yield nothing, a 400 part of several hours is
// asked for in halves, other answers throw their ResponseError; a bad range is a RangeError.
// importFromExport: the events sent through /batch with their insert_ids, group
// identifications through /groupidentify, an event the target refuses failing alone.
import { crc32, deflateRawSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createAppClient, createIngestClient, exportEvents, exportParts, importFromExport, PermissionDeniedError, zipEntries } from '../src/index.js';
import { fakeClock } from './fake-clock.js';
import { fakeFetch, json, type Handler, type Recorded } from './fake-fetch.js';

/** A zip of `files` (name, bytes), deflated or stored: what the Export API answers. */
function zipOf(files: [string, Uint8Array][], deflate: boolean): Uint8Array<ArrayBuffer> {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, content] of files) {
    const data = deflate ? deflateRawSync(content) : Buffer.from(content);
    const nameBytes = Buffer.from(name);
    // Both headers hold method, time, crc, sizes and name length alike, from the method on.
    const describe = (header: Buffer, methodAt: number) => {
      header.writeUInt16LE(deflate ? 8 : 0, methodAt);
      header.writeUInt32LE(crc32(content), methodAt + 6);
      header.writeUInt32LE(data.length, methodAt + 10);
      header.writeUInt32LE(content.length, methodAt + 14);
      header.writeUInt16LE(nameBytes.length, methodAt + 18);
      return header;
    };
    const local = describe(Buffer.alloc(30), 8);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    const central = describe(Buffer.alloc(46), 10);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, data);
    centrals.push(central, nameBytes);
    offset += local.length + nameBytes.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return new Uint8Array(Buffer.concat([...locals, directory, end]));
}

const event = (id: string, extra: Record<string, unknown> = {}) => ({ $insert_id: id, event_type: 'Play', user_id: 'user-1', device_id: null, event_time: '2026-11-20 09:04:01.250000', event_properties: {}, ...extra });
const hourFile = (events: object[]) => gzipSync(events.map((e) => JSON.stringify(e)).join('\n') + '\n');
const zipAnswer = (zip: Uint8Array<ArrayBuffer>) => new Response(zip, { status: 200, headers: { 'content-type': 'application/zip' } });

const appClient = (handler: Handler) => {
  const fake = fakeFetch(handler);
  return { fake, client: createAppClient({ apiKey: 'api', secretKey: 'secret', fetch: fake.fetch, clock: fakeClock().clock }) };
};
const rangeOf = (call: Recorded) => `${call.url.searchParams.get('start')}-${call.url.searchParams.get('end')}`;

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe('exportEvents', () => {
  it('reads each part once the previous one is consumed, hour files in the archive order, stored or deflated', async () => {
    const { fake, client } = appClient((call) =>
      rangeOf(call) === '20261120T00-20261120T23'
        ? zipAnswer(zipOf([['1/1_2026-11-20_9#0.json.gz', hourFile([event('a'), event('b')])], ['1/1_2026-11-20_10#0.json.gz', hourFile([event('c')])]], true))
        : zipAnswer(zipOf([['1/1_2026-11-21_0#0.json.gz', hourFile([event('d')])]], false)),
    );
    const events = exportEvents(client, '20261120T00', '20261121T05');
    const first = await events.next();
    expect(first.value).toMatchObject({ $insert_id: 'a', event_type: 'Play' });
    expect(fake.calls.map(rangeOf)).toEqual(['20261120T00-20261120T23']);
    expect((await collect(events)).map((e) => e.$insert_id)).toEqual(['b', 'c', 'd']);
    expect(fake.calls.map(rangeOf)).toEqual(['20261120T00-20261120T23', '20261121T00-20261121T05']);
    expect(fake.calls[0]!.url.pathname).toBe('/api/2/export');
    expect(fake.calls[0]!.headers.get('authorization')).toBe(`Basic ${Buffer.from('api:secret').toString('base64')}`);
  });

  it('a part without data (404) yields nothing; a part refused with 400 is asked for in halves', async () => {
    const { fake, client } = appClient((call) => {
      const [start, end] = [call.url.searchParams.get('start')!, call.url.searchParams.get('end')!];
      if (start !== end && start < '20261120T04') return json(400, { code: 400, error: 'The export is larger than 4 GB' });
      if (start === '20261120T00') return json(404, { code: 404, error: 'No events' });
      return zipAnswer(zipOf([['h.json.gz', hourFile([event(start)])]], true));
    });
    const ids = (await collect(exportEvents(client, '20261120T00', '20261120T05', { partHours: 6 }))).map((e) => e.$insert_id);
    expect(fake.calls.map(rangeOf)).toEqual([
      '20261120T00-20261120T05',
      '20261120T00-20261120T02',
      '20261120T00-20261120T00',
      '20261120T01-20261120T02',
      '20261120T01-20261120T01',
      '20261120T02-20261120T02',
      '20261120T03-20261120T05',
      '20261120T03-20261120T03',
      '20261120T04-20261120T05',
    ]);
    expect(ids).toEqual(['20261120T01', '20261120T02', '20261120T03', '20261120T04']);
  });

  it('other answers throw the error of their status; a range that is not hours is a RangeError before any request', async () => {
    const { fake, client } = appClient(() => json(403, { code: 403, error: 'Forbidden' }));
    await expect(collect(exportEvents(client, '20261120T00', '20261120T01'))).rejects.toThrow(PermissionDeniedError);
    const single = appClient(() => json(400, { code: 400, error: 'bad' }));
    await expect(collect(exportEvents(single.client, '20261120T00', '20261120T00'))).rejects.toThrow(/exporting the events from 20261120T00 to 20261120T00/);
    const calls = fake.calls.length;
    await expect(collect(exportEvents(client, '2026-11-20', '20261120T01'))).rejects.toThrow(RangeError);
    await expect(collect(exportEvents(client, '20261120T05', '20261120T01'))).rejects.toThrow(/end \(20261120T01\) is an hour at or after start/);
    await expect(collect(exportEvents(client, '20261131T00', '20261201T01'))).rejects.toThrow(/start is an hour as YYYYMMDDTHH/);
    expect(fake.calls.length).toBe(calls);
    expect(() => exportParts('20261120T00', '20261120T01', 0)).toThrow(/partHours is a whole number/);
  });

  it('a body that is no zip is a clear error', () => {
    expect(() => [...zipEntries(new Uint8Array([1, 2, 3]))]).toThrow(/not a zip archive/);
  });
});

describe('importFromExport', () => {
  it('sends the events through /batch with their insert_ids, groups through /groupidentify, a refused event failing alone', async () => {
    const { client: source } = appClient(() =>
      zipAnswer(
        zipOf(
          [
            [
              'h.json.gz',
              hourFile([
                event('a'),
                event('bad', { location_lat: 123 }),
                event('c', { event_properties: { $price: 2, $quantity: 3 } }),
                { ...event('g'), event_type: '$groupidentify', user_id: null, groups: { org: 'acme' }, group_properties: { plan: 'pro' } },
                { ...event('x'), event_type: null },
              ]),
            ],
          ],
          true,
        ),
      ),
    );
    const batches: string[][] = [];
    const target = fakeFetch((call) => {
      if (call.url.pathname === '/groupidentify') return json(200, {});
      const ids = (JSON.parse(call.body) as { events: { insert_id: string }[] }).events.map((e) => e.insert_id);
      batches.push(ids);
      const bad = ids.indexOf('bad');
      return bad >= 0 ? json(400, { code: 400, error: 'Invalid field values on some events', events_with_invalid_fields: { location_lat: [bad] } }) : json(200, { code: 200, events_ingested: ids.length });
    });
    const ingest = createIngestClient({ apiKey: 'target', fetch: target.fetch, clock: fakeClock().clock });
    const summary = await importFromExport(source, ingest, '20261120T00', '20261120T00');
    expect(batches).toEqual([
      ['a', 'bad', 'c'],
      ['a', 'c'],
    ]);
    expect(summary).toMatchObject({ read: 5, uploaded: 2, groupsIdentified: 1 });
    expect(summary.skipped).toEqual(new Map([['no event_type', 1]]));
    expect(summary.failures).toHaveLength(1);
    expect(summary.failures[0]).toMatchObject({ status: 400, events: [expect.objectContaining({ insert_id: 'bad' })] });
    const sent = JSON.parse(target.calls.find((call) => call.url.pathname === '/batch')!.body) as { api_key: string; events: Record<string, unknown>[]; options: unknown };
    expect(sent.api_key).toBe('target');
    expect(sent.options).toEqual({ min_id_length: 1 });
    expect(sent.events[2]).toMatchObject({ insert_id: 'c', price: 2, quantity: 3 });
    const groups = target.calls.find((call) => call.url.pathname === '/groupidentify')!;
    expect(JSON.parse(new URLSearchParams(groups.body).get('identification')!)).toEqual([{ group_type: 'org', group_value: 'acme', group_properties: { plan: 'pro' } }]);
  });

  it('a range without data sends nothing; an export the source refuses throws', async () => {
    const { client: empty } = appClient(() => json(404, { code: 404, error: 'No events' }));
    const target = fakeFetch();
    const ingest = createIngestClient({ apiKey: 'target', fetch: target.fetch });
    expect(await importFromExport(empty, ingest, '20261120T00', '20261120T01', { partHours: 1 })).toMatchObject({ read: 0, uploaded: 0 });
    expect(target.calls).toHaveLength(0);
    const { client: refused } = appClient(() => json(403, { code: 403, error: 'Forbidden' }));
    await expect(importFromExport(refused, ingest, '20261120T00', '20261120T00')).rejects.toThrow(PermissionDeniedError);
  });
});
