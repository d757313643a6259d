// The Export API: the typed app client against the mock of the application host role (its 200
// example stands for the archive), the line schema of the archive's files, then the requests
// the spec forbids and their valid controls.
import { createAppClient } from '@svc/client';
import { findOperation } from '@svc/openapi-validation';
import { describe, expect, inject, test } from 'vitest';
import { acceptedByPrism, expectValid } from './support/client-checks.js';
import { API_KEY, BASIC, type ForbiddenCase, type ValidCase, forbiddenRequests, get, query, validRequests } from './support/mock-requests.js';

const path = '/api/2/export';
const exportOf = (params: Record<string, string>, headers: Record<string, string> = { authorization: BASIC }) => get(`${path}?${query(params)}`, headers);

describe('typed app client against the mock', () => {
  const app = createAppClient({ baseUrl: inject('mockUrls').app!, apiKey: API_KEY, secretKey: 'secret-key-0123', fetch: acceptedByPrism() });

  test('getEventExport answers the archive', async () => {
    const { data, response } = await app.GET(path, { params: { query: { start: '20261120T00', end: '20261120T23' } }, parseAs: 'arrayBuffer' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/zip/);
    expect(data).toBeInstanceOf(ArrayBuffer);
  });
});

test("the archive's lines are documented: the schema's example is a valid line with every field", () => {
  const line = findOperation('GET', path).op.responses['200']['x-svc-file-contents']['json-lines'];
  expectValid('export', line, line.example);
  expect(Object.keys(line.example)).toEqual(line.required);
});

const cases: ForbiddenCase[] = [
  {
    name: 'a start not written YYYYMMDDTHH',
    role: 'app',
    request: exportOf({ start: '2026-11-20T00', end: '20261120T23' }),
    prismStatus: 400,
    problem: /query parameter start: \/ must match pattern/,
  },
  {
    name: 'no end',
    role: 'app',
    request: exportOf({ start: '20261120T00' }),
    prismStatus: 400,
    problem: /query parameter end: is required/,
  },
  {
    name: 'no credentials',
    role: 'app',
    request: exportOf({ start: '20261120T00', end: '20261120T23' }, {}),
    prismStatus: 401,
    problem: /credentials: none of the security requirements is met \(BasicAuth\)/,
  },
];

forbiddenRequests(cases);

const valid: ValidCase[] = [
  { name: 'whole day', role: 'app', request: exportOf({ start: '20261120T00', end: '20261120T23' }), status: 200 },
  { name: 'one-digit hours', role: 'app', request: exportOf({ start: '20261120T5', end: '20261120T9' }), status: 200 },
];

validRequests(valid);
