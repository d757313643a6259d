import { describe, expect, it } from 'vitest';
import { planIdRequests } from '../src/cohort-upload.js';
import {
  CohortExportError,
  ConnectionError,
  createAppClient,
  exportCohort,
  parseCohortCsv,
  parseCsv,
  updateCohortMembership,
  uploadCohort,
  type CohortUpload,
  type MembershipUpdate,
} from '../src/index.js';
import { fakeFetch, json, type Handler, type Recorded } from './fake-fetch.js';

const BASE = 'http://localhost:8000';
const CSV = 'svc_id,user_id,city,gp:plan\n498120377310,ana-1001,Lisbon,pro\n510384112467,lee-2207,"Portland, OR",free\n502277640018,,Berlin,\n';
const appClient = (handler: Handler) => {
  const fake = fakeFetch(handler);
  return { fake, client: createAppClient({ apiKey: 'key', secretKey: 'secret', fetch: fake.fetch }) };
};
const recordingSleep = () => {
  const delays: number[] = [];
  return { delays, sleep: async (ms: number) => void delays.push(ms) };
};
const path = (call: Recorded) => call.url.pathname;

/** The export operations of one job: 202 for the first `pending` polls, then the given file answer. */
function exportServer(pending: number, file: (call: Recorded) => Response): Handler {
  let polls = 0;
  return (call) => {
    const job = { request_id: 'req-1', cohort_id: 'c1' };
    if (path(call) === '/api/5/cohorts/request/c1') return json(202, job);
    if (path(call) === '/api/5/cohorts/request-status/req-1') {
      return polls++ < pending ? json(202, { ...job, async_status: 'JOB INPROGRESS' }) : json(200, { ...job, async_status: 'JOB COMPLETED' });
    }
    if (path(call) === '/api/5/cohorts/request/req-1/file') return file(call);
    return json(404, { code: 404, error: `unexpected ${call.method} ${call.url.href}` });
  };
}
const csvFile = () => new Response(CSV, { status: 200, headers: { 'Content-Type': 'text/csv' } });

describe('exportCohort', () => {
  it('requests with properties, polls with backoff until JOB COMPLETED and parses the file', async () => {
    const { fake, client } = appClient(exportServer(2, csvFile));
    const { delays, sleep } = recordingSleep();
    const result = await exportCohort(client, 'c1', { props: true, propKeys: ['city', 'gp:plan'], pollIntervalMs: 100, sleep });

    expect(fake.calls.map((c) => `${c.method} ${c.url.href}`)).toEqual([
      `GET ${BASE}/api/5/cohorts/request/c1?props=1&propKeys=city&propKeys=gp%3Aplan`,
      `GET ${BASE}/api/5/cohorts/request-status/req-1`,
      `GET ${BASE}/api/5/cohorts/request-status/req-1`,
      `GET ${BASE}/api/5/cohorts/request-status/req-1`,
      `GET ${BASE}/api/5/cohorts/request/req-1/file`,
    ]);
    expect(fake.calls.every((c) => c.headers.get('authorization') === `Basic ${btoa('key:secret')}`)).toBe(true);
    expect(delays).toEqual([100, 200, 400]);
    expect(result).toEqual({
      requestId: 'req-1',
      cohortId: 'c1',
      polls: 3,
      redirected: false,
      propertyColumns: ['city', 'gp:plan'],
      members: [
        { svc_id: '498120377310', user_id: 'ana-1001', properties: { city: 'Lisbon', 'gp:plan': 'pro' } },
        { svc_id: '510384112467', user_id: 'lee-2207', properties: { city: 'Portland, OR', 'gp:plan': 'free' } },
        { svc_id: '502277640018', user_id: null, properties: { city: 'Berlin' } },
      ],
    });
  });

  it('sends no property parameters without props', async () => {
    const { fake, client } = appClient(exportServer(0, csvFile));
    await exportCohort(client, 'c1', { propKeys: ['city'], sleep: recordingSleep().sleep });
    expect(fake.calls[0]!.url.search).toBe('');
  });

  it('follows a 302 to the object-store link without sending credentials', async () => {
    const link = 'https://objects.example/187520/req-1.csv?X-Amz-Expires=60';
    const { fake, client } = appClient(exportServer(0, () => new Response(null, { status: 302, headers: { Location: link } })));
    const objectStore = fakeFetch((call) => (call.url.href === link ? csvFile() : new Response('gone', { status: 403 })));
    const result = await exportCohort(client, 'c1', { sleep: recordingSleep().sleep, fetch: objectStore.fetch });
    expect(result.redirected).toBe(true);
    expect(result.members.map((m) => m.svc_id)).toEqual(['498120377310', '510384112467', '502277640018']);
    expect(fake.calls).toHaveLength(3);
    expect(objectStore.calls).toHaveLength(1);
    expect(objectStore.calls[0]!.headers.get('authorization')).toBeNull();
  });

  it('repeats the download with redirect following where the redirect is opaque (browsers)', async () => {
    const opaque = () => Object.defineProperty(new Response(null, { status: 302 }), 'type', { value: 'opaqueredirect' });
    const { fake, client } = appClient(exportServer(0, (call) => (fake.calls.filter((c) => path(c) === path(call)).length === 1 ? opaque() : csvFile())));
    const result = await exportCohort(client, 'c1', { sleep: recordingSleep().sleep });
    expect(fake.calls.map(path).slice(-2)).toEqual(['/api/5/cohorts/request/req-1/file', '/api/5/cohorts/request/req-1/file']);
    expect(result.members).toHaveLength(3);
  });

  it('reports an expired object-store link', async () => {
    const { client } = appClient(exportServer(0, () => new Response(null, { status: 302, headers: { Location: 'https://objects.example/x' } })));
    const objectStore = fakeFetch(() => new Response('<Error>Request has expired</Error>', { status: 403 }));
    const failure = exportCohort(client, 'c1', { sleep: recordingSleep().sleep, fetch: objectStore.fetch });
    await expect(failure).rejects.toMatchObject({ stage: 'link', status: 403 });
  });

  it('gives up after maxPolls, the waits capped by maxPollIntervalMs', async () => {
    const { fake, client } = appClient(exportServer(Infinity, csvFile));
    const { delays, sleep } = recordingSleep();
    const failure = exportCohort(client, 'c1', { pollIntervalMs: 1000, backoffFactor: 3, maxPollIntervalMs: 5000, maxPolls: 4, sleep });
    await expect(failure).rejects.toBeInstanceOf(CohortExportError);
    await expect(failure).rejects.toMatchObject({ stage: 'timeout', status: null });
    expect(delays).toEqual([1000, 3000, 5000, 5000]);
    expect(fake.calls).toHaveLength(5);
  });

  it('throws with the answer when a step is refused', async () => {
    const { client } = appClient(() => json(404, { code: 404, error: 'No cohort with id c1 in this project' }));
    const failure = exportCohort(client, 'c1', { sleep: recordingSleep().sleep });
    await expect(failure).rejects.toMatchObject({
      stage: 'request',
      status: 404,
      body: { code: 404, error: 'No cohort with id c1 in this project' },
      message: 'cohort export request answered 404: No cohort with id c1 in this project',
    });
    const notReady = appClient(exportServer(0, () => json(409, { code: 409, error: 'not completed' })));
    await expect(exportCohort(notReady.client, 'c1', { sleep: recordingSleep().sleep })).rejects.toMatchObject({ stage: 'file', status: 409 });
  });

  it('stops waiting when aborted', async () => {
    const { client } = appClient(exportServer(Infinity, csvFile));
    const controller = new AbortController();
    const failure = exportCohort(client, 'c1', { pollIntervalMs: 60_000, signal: controller.signal });
    setTimeout(() => controller.abort(new Error('stop')), 20);
    await expect(failure).rejects.toThrow('stop');
  });

  it('rejects invalid options', async () => {
    const { client } = appClient(exportServer(0, csvFile));
    await expect(exportCohort(client, 'c1', { maxPolls: 0 })).rejects.toThrow(RangeError);
    await expect(exportCohort(client, 'c1', { backoffFactor: 0.5 })).rejects.toThrow(RangeError);
  });
});

describe('cohort CSV', () => {
  it('parses quotes, escaped quotes, CRLF and line breaks inside fields', () => {
    expect(parseCsv('a,b\r\n"x, ""y""","line\nbreak"\r\n1,\n')).toEqual([
      ['a', 'b'],
      ['x, "y"', 'line\nbreak'],
      ['1', ''],
    ]);
    expect(() => parseCsv('a,"b\n')).toThrow(SyntaxError);
  });

  it('needs an svc_id column and keeps members without user_id column', () => {
    expect(() => parseCohortCsv('user_id\nana\n')).toThrow(/svc_id/);
    expect(parseCohortCsv('svc_id\n1\n\n2')).toEqual({
      propertyColumns: [],
      members: [
        { svc_id: '1', user_id: null, properties: {} },
        { svc_id: '2', user_id: null, properties: {} },
      ],
    });
  });
});

describe('planIdRequests', () => {
  it('fills requests in order and continues a large entry in the next request', () => {
    expect(planIdRequests([5, 2, 4], 4)).toEqual([
      [{ entryIndex: 0, start: 0, end: 4 }],
      [
        { entryIndex: 0, start: 4, end: 5 },
        { entryIndex: 1, start: 0, end: 2 },
        { entryIndex: 2, start: 0, end: 1 },
      ],
      [{ entryIndex: 2, start: 1, end: 4 }],
    ]);
    expect(planIdRequests([0, 3], 3)).toEqual([[{ entryIndex: 1, start: 0, end: 3 }]]);
  });
});

const ids = (n: number, prefix = 'user-') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
const upload = (n: number, extra: Partial<CohortUpload> = {}) => ({
  name: 'Beta testers',
  app_id: 187520,
  id_type: 'BY_USER_ID' as const,
  owner: 'ana@example.com',
  published: true,
  ...extra,
  ids: ids(n),
});
const sentBody = (call: Recorded) => JSON.parse(call.body);
const uploadAnswer = (call: Recorded) => {
  const sent: string[] = sentBody(call).ids;
  return json(200, { cohortId: 'c9', metadata: { matched: sent.length - 1, totals: sent.length, invalid_ids_sample: [sent[0]] } });
};
const membershipAnswer = (call: Recorded) => {
  const body: MembershipUpdate = sentBody(call);
  return json(200, {
    cohort_id: body.cohort_id,
    memberships_result: body.memberships.map((m) => ({ skipped_ids: m.ids.slice(-1), id_type: m.id_type, operation: m.operation })),
  });
};
const cohortServer: Handler = (call) => (path(call) === '/api/3/cohorts/upload' ? uploadAnswer(call) : membershipAnswer(call));

describe('uploadCohort', () => {
  it('uploads the first 100,000 IDs and adds the rest with membership requests', async () => {
    const { fake, client } = appClient(cohortServer);
    const summary = await uploadCohort(client, upload(250_001, { cg: 'User', skip_invalid_ids: false }));

    expect(fake.calls.map((c) => [path(c), (sentBody(c).ids ?? sentBody(c).memberships[0].ids).length])).toEqual([
      ['/api/3/cohorts/upload', 100_000],
      ['/api/3/cohorts/membership', 100_000],
      ['/api/3/cohorts/membership', 50_001],
    ]);
    const { ids: first, ...uploadFields } = sentBody(fake.calls[0]!);
    expect(first[0]).toBe('user-0');
    expect(uploadFields).toEqual({ name: 'Beta testers', app_id: 187520, id_type: 'BY_USER_ID', owner: 'ana@example.com', published: true, cg: 'User', skip_invalid_ids: false });
    const { memberships, ...membershipFields } = sentBody(fake.calls[2]!);
    expect(membershipFields).toEqual({ cohort_id: 'c9', count_group: 'User', skip_invalid_ids: false });
    expect(memberships[0].id_type).toBe('BY_NAME');
    expect(memberships[0].operation).toBe('ADD');
    expect(memberships[0].ids[0]).toBe('user-200000');
    expect(summary).toEqual({
      cohortId: 'c9',
      requests: 3,
      idsApplied: 250_001,
      matched: 99_999,
      totals: 100_000,
      invalidIds: ['user-0', 'user-199999', 'user-250000'],
      failure: null,
    });
  });

  it('sends service IDs as BY_ID to the membership requests', async () => {
    const { fake, client } = appClient(cohortServer);
    await uploadCohort(client, upload(5, { id_type: 'BY_SVC_ID' }), { maxIdsPerRequest: 3 });
    expect(sentBody(fake.calls[1]!).memberships[0]).toMatchObject({ id_type: 'BY_ID', ids: ['user-3', 'user-4'] });
    expect(sentBody(fake.calls[1]!).count_group).toBe('User');
  });

  it('validates every part as an upload with skip_save', async () => {
    const { fake, client } = appClient((call) => json(200, { cohortId: null, metadata: { matched: 2, totals: sentBody(call).ids.length, invalid_ids_sample: [] } }));
    const summary = await uploadCohort(client, upload(5, { skip_save: true }), { maxIdsPerRequest: 2 });
    expect(fake.calls.map((c) => [path(c), sentBody(c).skip_save, sentBody(c).ids])).toEqual([
      ['/api/3/cohorts/upload', true, ['user-0', 'user-1']],
      ['/api/3/cohorts/upload', true, ['user-2', 'user-3']],
      ['/api/3/cohorts/upload', true, ['user-4']],
    ]);
    expect(summary).toMatchObject({ cohortId: null, requests: 3, matched: 6, totals: 5 });
  });

  it('stops at the first refused request and names the first ID not applied', async () => {
    const refusal = { error: { http_code: 400, type: 'INVALID_IDS', message: 'invalid IDs', metadata: { invalid_ids: ['user-4'] } } };
    const { fake, client } = appClient((call, index) => (index === 1 ? json(400, refusal) : cohortServer(call, index)));
    const summary = await uploadCohort(client, upload(9), { maxIdsPerRequest: 3 });
    expect(fake.calls).toHaveLength(2);
    expect(summary).toMatchObject({ cohortId: 'c9', requests: 2, idsApplied: 3, failure: { status: 400, error: refusal, entryIndex: 0, idOffset: 3 } });
  });

  it('reports a network failure without throwing', async () => {
    const { client } = appClient(() => {
      throw new TypeError('fetch failed');
    });
    const summary = await uploadCohort(client, upload(2));
    expect(summary.failure).toMatchObject({ status: null, idOffset: 0 });
    expect(summary.failure?.error).toBeInstanceOf(ConnectionError);
    expect((summary.failure?.error as ConnectionError).cause).toBeInstanceOf(TypeError);
    expect(summary.cohortId).toBeNull();
  });

  it('refuses empty and oversized cohorts before sending anything', async () => {
    const { fake, client } = appClient(cohortServer);
    await expect(uploadCohort(client, upload(0))).rejects.toThrow(RangeError);
    await expect(uploadCohort(client, { ...upload(0), ids: new Array<string>(2_000_001).fill('x') })).rejects.toThrow(/2000000/);
    await expect(uploadCohort(client, upload(1), { maxIdsPerRequest: 0 })).rejects.toThrow(RangeError);
    expect(fake.calls).toHaveLength(0);
  });
});

describe('updateCohortMembership', () => {
  it('packs the changes into requests of at most 100,000 IDs and sums the results per change', async () => {
    const { fake, client } = appClient(membershipAnswer);
    const summary = await updateCohortMembership(
      client,
      'c1',
      [
        { ids: ids(150_000, 's'), id_type: 'BY_ID', operation: 'ADD' },
        { ids: ids(30_000, 'u'), id_type: 'BY_NAME', operation: 'REMOVE' },
        { ids: ['x'], id_type: 'BY_NAME', operation: 'ADD' },
      ],
      { count_group: 'User', skip_invalid_ids: true },
    );
    const shapes = fake.calls.map((c) => sentBody(c).memberships.map((m: { ids: string[]; operation: string }) => [m.operation, m.ids.length]));
    expect(shapes).toEqual([[['ADD', 100_000]], [['ADD', 50_000], ['REMOVE', 30_000], ['ADD', 1]]]);
    const { memberships, ...fields } = sentBody(fake.calls[1]!);
    expect(fields).toEqual({ cohort_id: 'c1', count_group: 'User', skip_invalid_ids: true });
    expect(memberships[0].ids[0]).toBe('s100000');
    expect(summary).toEqual({
      cohortId: 'c1',
      requests: 2,
      failure: null,
      changes: [
        { id_type: 'BY_ID', operation: 'ADD', idsApplied: 150_000, skipped_ids: ['s99999', 's149999'] },
        { id_type: 'BY_NAME', operation: 'REMOVE', idsApplied: 30_000, skipped_ids: ['u29999'] },
        { id_type: 'BY_NAME', operation: 'ADD', idsApplied: 1, skipped_ids: ['x'] },
      ],
    });
  });

  it('leaves the defaults to the server and reports where a refusal stopped', async () => {
    const refusal = { error: { http_code: 404, type: 'NOT_FOUND', message: 'No cohort with id c0' } };
    const { fake, client } = appClient((call, index) => (index === 1 ? json(404, refusal) : membershipAnswer(call)));
    const summary = await updateCohortMembership(
      client,
      'c0',
      [
        { ids: ['a', 'b'], id_type: 'BY_ID', operation: 'ADD' },
        { ids: ['c', 'd', 'e'], id_type: 'BY_ID', operation: 'REMOVE' },
      ],
      { maxIdsPerRequest: 3 },
    );
    expect(Object.keys(sentBody(fake.calls[0]!)).sort()).toEqual(['cohort_id', 'memberships']);
    expect(fake.calls).toHaveLength(2);
    expect(summary.failure).toEqual({ status: 404, error: refusal, entryIndex: 1, idOffset: 1 });
    expect(summary.changes.map((c) => c.idsApplied)).toEqual([2, 1]);
  });
});
