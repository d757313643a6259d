import { describe, expect, it } from 'vitest';
import { createApiClient, createAppClient, createIngestClient, maskBody, maskUrl, type Logger } from '../src/index.js';
import { fakeClock } from './fake-clock.js';
import { fakeFetch, json, type Handler } from './fake-fetch.js';

const apiKey = 'proj-key-SECRET-123';
const secretKey = 'secret-SECRET-456';
const basic = Buffer.from(`${apiKey}:${secretKey}`).toString('base64');

/** A logger that keeps every line, and everything it was told as one text to search. */
function recorder() {
  const lines: { level: string; message: string; details: Record<string, unknown> | undefined }[] = [];
  const keep = (level: string) => (message: string, details?: Record<string, unknown>) => void lines.push({ level, message, details });
  const logger: Logger = { debug: keep('debug'), info: keep('info'), warn: keep('warn'), error: keep('error') };
  return { logger, lines, text: () => JSON.stringify(lines) };
}

const expectNoCredentials = (text: string) => {
  for (const secret of [apiKey, secretKey, basic]) expect(text).not.toContain(secret);
};

describe('logger', () => {
  it('is told about each request (debug), retry (warn) and failure (error), with Authorization masked', async () => {
    const log = recorder();
    const handler: Handler = () => json(503, { error: 'busy' }, { 'X-Request-Id': 'req-9' });
    const client = createAppClient({ apiKey, secretKey, fetch: fakeFetch(handler).fetch, logger: log.logger, clock: fakeClock().clock });
    await client.GET('/api/3/cohorts');
    expect(log.lines.map((line) => line.level)).toEqual(['debug', 'debug', 'warn', 'debug', 'warn', 'debug', 'error']);
    expect(log.lines[0]!.message).toBe('GET http://localhost:8000/api/3/cohorts');
    expect(log.lines[0]!.details?.headers).toMatchObject({ authorization: '***' });
    expect(log.lines[2]!.message).toMatch(/^GET http:\/\/localhost:8000\/api\/3\/cohorts: retry 1 of 2 in \d+ ms$/);
    expect(log.lines[1]!.details).toMatchObject({ status: 503, attempt: 1, requestId: 'req-9' });
    expect(log.lines.at(-1)!.message).toBe('GET http://localhost:8000/api/3/cohorts failed: HTTP 503');
    expectNoCredentials(log.text());
  });

  it('masks api_key in JSON bodies, form bodies and query strings', async () => {
    const log = recorder();
    const ok = fakeFetch(() => json(200, { code: 200, events_ingested: 1 }));
    const ingest = createIngestClient({ apiKey, fetch: ok.fetch, logger: log.logger });
    await ingest.POST('/batch', { body: { events: [{ event_type: 'A', user_id: 'u-1' }] } });
    await ingest.POST('/groupidentify', { body: { identification: { group_type: 'org', group_value: '1', group_properties: { plan: 'pro' } } } });
    const api = createApiClient({ apiKey, fetch: ok.fetch, logger: log.logger });
    await api.POST('/usermap', { body: { mapping: [{ user_id: 'a', global_user_id: 'b' }] } });

    expect(ok.calls[0]!.body).toContain(apiKey);
    expect(ok.calls[1]!.body).toContain(encodeURIComponent(apiKey));
    expect(ok.calls[2]!.url.searchParams.get('api_key')).toBe(apiKey);
    const requests = log.lines.filter((line) => line.details?.headers);
    expect(requests[0]!.details?.body).toContain('"api_key":"***"');
    expect(requests[1]!.details?.body).toContain('api_key=***');
    expect(requests[2]!.message).toContain('api_key=***');
    expectNoCredentials(log.text());
  });

  it('reports a failed connection as an error, and takes loggers with only some levels', async () => {
    const warnings: string[] = [];
    const errors: string[] = [];
    const fetch = () => Promise.reject(new TypeError('getaddrinfo ENOTFOUND'));
    const client = createAppClient({ apiKey, secretKey, fetch, clock: fakeClock().clock, maxRetries: 1, logger: { warn: (m) => warnings.push(m), error: (m) => errors.push(m) } });
    await expect(client.GET('/api/3/cohorts')).rejects.toThrow('ENOTFOUND');
    expect(warnings).toHaveLength(1);
    expect(errors).toEqual(['GET http://localhost:8000/api/3/cohorts failed: GET /api/3/cohorts: connection failed: getaddrinfo ENOTFOUND']);
  });
});

describe('masking', () => {
  it('masks a key that a fetch error quotes, in the log and in the error', async () => {
    const log = recorder();
    const fetch = () => Promise.reject(new TypeError(`request to http://h/usermap?api_key=${apiKey} failed`));
    const client = createApiClient({ apiKey, fetch, maxRetries: 0, logger: log.logger });
    const error = await client.POST('/usermap', { body: { mapping: [] } }).then(() => undefined, (thrown: Error) => thrown);
    expect(error?.message).toBe('POST /usermap: connection failed: request to http://h/usermap?api_key=*** failed');
    expectNoCredentials(log.text());
  });

  it('masks the credential fields of JSON and form text and of URLs, and cuts long bodies', () => {
    expect(maskBody('{"api_key": "k\\"x", "events":[]}')).toBe('{"api_key": "***", "events":[]}');
    expect(maskBody('secret_key=s&api_key=k&a=1')).toBe('secret_key=***&api_key=***&a=1');
    expect(maskBody('x'.repeat(30), 10)).toBe('xxxxxxxxxx… (30 characters)');
    expect(maskUrl('https://h/usermap?api_key=k&secret_key=s&x=1')).toBe('https://h/usermap?api_key=***&secret_key=***&x=1');
    expect(maskUrl('https://h/a?b=1')).toBe('https://h/a?b=1');
  });
});
