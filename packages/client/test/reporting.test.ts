import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createAppClient, createOperationQuerySerializer, operationRules, type EventSpecification } from '../src/index.js';
import { fakeFetch, json } from './fake-fetch.js';

const bundle = JSON.parse(readFileSync(new URL('../../../specs/dist/reporting.json', import.meta.url), 'utf8'));
const basic = `Basic ${Buffer.from('api-key:secret-key').toString('base64')}`;
const appClient = (fetch: typeof globalThis.fetch) => createAppClient({ apiKey: 'api-key', secretKey: 'secret-key', fetch });

const played: EventSpecification = {
  event_type: 'Song Played',
  filters: [{ subprop_type: 'user', subprop_key: 'gp:plan', subprop_op: 'is not', subprop_value: ['free & trial'] }],
  group_by: [{ type: 'user', value: 'country' }],
};
const segmentationAnswer = { data: { series: [[3]], seriesLabels: [0], seriesCollapsed: [[{ value: 3 }]], xValues: ['2026-11-01'] } };

describe('reporting through the app client', () => {
  it('sends e, e2 and s as JSON text and the other parameters as they are, with HTTP Basic', async () => {
    const fake = fakeFetch(() => json(200, segmentationAnswer));
    const segment = [{ prop: 'country', op: 'is' as const, values: ['Germany'] }];
    const { data } = await appClient(fake.fetch).GET('/api/2/events/segmentation', {
      params: {
        query: { e: played, e2: { event_type: 'ce:Checkout' }, s: segment, m: 'formula', formula: 'UNIQUES(B)/UNIQUES(A)', start: '20261101', end: '20261107', i: -3600000, limit: 10 },
      },
    });
    expect(data).toEqual(segmentationAnswer);
    const [call] = fake.calls;
    expect(call!.url.pathname).toBe('/api/2/events/segmentation');
    expect(call!.headers.get('authorization')).toBe(basic);
    const query = call!.url.searchParams;
    expect(JSON.parse(query.get('e')!)).toEqual(played);
    expect(JSON.parse(query.get('e2')!)).toEqual({ event_type: 'ce:Checkout' });
    expect(JSON.parse(query.get('s')!)).toEqual(segment);
    expect(Object.fromEntries([...query].filter(([name]) => !['e', 'e2', 's'].includes(name)))).toEqual({
      m: 'formula',
      formula: 'UNIQUES(B)/UNIQUES(A)',
      start: '20261101',
      end: '20261107',
      i: '-3600000',
      limit: '10',
    });
  });

  it('repeats e once per funnel step, each step as JSON text, in order', async () => {
    const fake = fakeFetch(() => json(200, { data: [] }));
    const steps: EventSpecification[] = [{ event_type: 'Product Viewed' }, played, { event_type: '_all' }];
    await appClient(fake.fetch).GET('/api/2/funnels', {
      params: { query: { e: steps, start: '20261101', end: '20261130', mode: 'unordered', cs: 3, limit: 100 } },
    });
    const query = fake.calls[0]!.url.searchParams;
    expect(query.getAll('e').map((step) => JSON.parse(step))).toEqual(steps);
    expect([query.get('mode'), query.get('cs'), query.get('limit')]).toEqual(['unordered', '3', '100']);
  });

  it('reads the chart CSV inside data, as the platform answers it, and an error as JSON', async () => {
    const csv = '"\tPlays"\r\n\r\n"\tuniques"\r\n\r\n"\tSegment","\t2026-11-01"\r\n"\tAll users","12"\r\n';
    const fake = fakeFetch((request) => (request.url.pathname.endsWith('/f3kq9zt/csv') ? json(200, { data: csv }) : json(404, { code: 404, error: 'Chart not found' })));
    const client = appClient(fake.fetch);
    const found = await client.GET('/api/3/chart/{chart_id}/csv', { params: { path: { chart_id: 'f3kq9zt' } } });
    expect(found.data?.data).toBe(csv);
    const missing = await client.GET('/api/3/chart/{chart_id}/csv', { params: { path: { chart_id: 'nope' } } });
    expect(missing.data).toBeUndefined();
    expect(missing.error).toEqual({ code: 404, error: 'Chart not found' });
    expect(fake.calls.map((call) => call.url.pathname)).toEqual(['/api/3/chart/f3kq9zt/csv', '/api/3/chart/nope/csv']);
  });

  it("lets a caller's parseAs win over the rule's", async () => {
    const fake = fakeFetch(() => new Response('a,b\r\n', { status: 200, headers: { 'Content-Type': 'text/csv' } }));
    const { data } = await appClient(fake.fetch).GET('/api/3/chart/{chart_id}/csv', {
      params: { path: { chart_id: 'f3kq9zt' } },
      parseAs: 'blob',
    });
    expect(data).toBeInstanceOf(Blob);
    expect(await (data as Blob).text()).toBe('a,b\r\n');
  });

  it('keeps JSON answers of the other operations parsed as JSON', async () => {
    const answer = { data: [{ value: 'Song Played', display: 'Song played', totals: 3, non_active: false, hidden: false, flow_hidden: false, deleted: false }] };
    const fake = fakeFetch(() => json(200, answer));
    const { data } = await appClient(fake.fetch).GET('/api/2/events/list');
    expect(data).toEqual(answer);
  });
});

describe('JSON-items query parameters', () => {
  const serialize = createOperationQuerySerializer({ json: ['s'], jsonItems: ['e'], arrays: {} });

  it('encodes every item so that it comes back intact', () => {
    const steps = [{ event_type: 'A & B = "C"' }, { event_type: 'Größe/ü ?#' }];
    const query = new URLSearchParams(serialize({ e: steps, s: [{ prop: 'gp:a+b', op: 'is', values: ['x y'] }] }));
    expect(query.getAll('e').map((step) => JSON.parse(step))).toEqual(steps);
    expect(JSON.parse(query.get('s')!)).toEqual([{ prop: 'gp:a+b', op: 'is', values: ['x y'] }]);
  });

  it('sends a lone object as one item and an empty array as nothing', () => {
    expect(new URLSearchParams(serialize({ e: { event_type: 'A' } })).getAll('e')).toEqual(['{"event_type":"A"}']);
    expect(serialize({ e: [] })).toBe('');
  });
});

describe('reporting rules follow the bundle', () => {
  type Param = { name: string; in: string; content?: Record<string, unknown>; 'x-svc-json-items'?: string };
  const resolve = (node: { $ref?: string }) =>
    node.$ref ? node.$ref.slice(2).split('/').reduce((acc: any, key) => acc[key], bundle) : node;

  it('marks the content-JSON parameters, the JSON-items arrays and the text answers of every operation', () => {
    const seen: Record<string, { json: string[]; jsonItems: string[]; parseAs: string }> = {};
    for (const [path, item] of Object.entries<any>(bundle.paths)) {
      const op = item.get;
      const params: Param[] = (op.parameters ?? []).map(resolve);
      const successTypes = Object.keys(resolve(op.responses['200']).content);
      seen[path] = {
        json: params.filter((p) => p.in === 'query' && p.content?.['application/json']).map((p) => p.name),
        jsonItems: params.filter((p) => p['x-svc-json-items']).map((p) => p.name),
        parseAs: successTypes.every((type) => type.startsWith('text/')) ? 'text' : 'json',
      };
      const rule = operationRules.app?.[`GET ${path}`];
      expect(rule?.group).toBe('reporting');
      expect({ json: rule?.query.json, jsonItems: rule?.query.jsonItems, parseAs: rule?.parseAs }).toEqual(seen[path]);
    }
    expect(seen['/api/2/events/segmentation']).toEqual({ json: ['e', 'e2', 's'], jsonItems: [], parseAs: 'json' });
    expect(seen['/api/2/funnels']).toEqual({ json: ['s'], jsonItems: ['e'], parseAs: 'json' });
    expect(seen['/api/3/chart/{chart_id}/csv']?.parseAs).toBe('json');
  });

  it('points x-svc-json-items of the funnel steps at the event specification schema', () => {
    const steps = resolve(bundle.paths['/api/2/funnels'].get.parameters[0]) as Param;
    expect(steps['x-svc-json-items']).toBe('#/components/schemas/EventSpecification');
    expect(resolve({ $ref: steps['x-svc-json-items'] })).toBe(bundle.components.schemas.EventSpecification);
  });
});
