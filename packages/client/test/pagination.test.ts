// The listing helpers against the specs' `x-svc-pagination` (read into the generated rules):
// every paged or listed operation has a `for await` helper and every helper lists one, and each
// helper sends the page parameter and reads the members the extension names.
import { describe, expect, it } from 'vitest';
import * as C from '../src/index.js';
import { fakeFetch, json, type Recorded } from './fake-fetch.js';

type Clients = { app: C.AppClient; experiment: C.ExperimentClient };
type Walk = (clients: Clients) => AsyncIterable<unknown>;

/** The helper of each listed operation, called with what it needs; offset listings two items a page. */
const helpers: Record<string, Walk> = {
  listAnnotationCategories: ({ app }) => C.listAnnotationCategories(app),
  listAnnotations: ({ app }) => C.listAnnotations(app),
  listCohorts: ({ app }) => C.listCohorts(app),
  listDeletionJobs: ({ app }) => C.listDeletionJobs(app, { start_day: '2026-11-01', end_day: '2026-11-30' }),
  listFlags: ({ experiment }) => C.listFlags(experiment),
  listSdkFlags: ({ experiment }) => C.listSdkFlags(experiment),
  listEventTypeTotals: ({ app }) => C.listEventTypeTotals(app),
  getUserActivity: ({ app }) => C.listUserEvents(app, { user: 510384112467, limit: 2 }),
  listSessionReplays: ({ app }) => C.listReplays(app),
  listSessionReplayFiles: ({ app }) => C.listReplayFiles(app, 'd/1'),
  listEventCategories: ({ app }) => C.listEventCategories(app),
  listEventProperties: ({ app }) => C.listEventProperties(app),
  listEventTypes: ({ app }) => C.listEventTypes(app),
  listUserProperties: ({ app }) => C.listUserProperties(app),
};

const paged = Object.values(C.operationRules)
  .flatMap((rules) => Object.values(rules))
  .filter((rule): rule is C.OperationRule & { pagination: C.PaginationRule } => rule.pagination !== null);

/** An answer holding `items` where the extension says, and `extra` members. */
const answer = (pagination: C.PaginationRule, items: string[], extra: [string, unknown][] = []) =>
  json(200, pagination.items === undefined ? items : Object.fromEntries([[pagination.items, items], ...extra]));

/** Three items over the pages the extension describes (one answer for `none`). */
function pages(pagination: C.PaginationRule) {
  const parameter = (request: Recorded) => (pagination.parameter === undefined ? null : request.url.searchParams.get(pagination.parameter));
  const next = (token: string | null): [string, unknown][] => (pagination.next === undefined ? [] : [[pagination.next, token]]);
  switch (pagination.style) {
    case 'token':
      return (request: Recorded) => (parameter(request) === 't2' ? answer(pagination, ['c'], next(null)) : answer(pagination, ['a', 'b'], next('t2')));
    case 'offset':
      return (request: Recorded) => (parameter(request) === '2' ? answer(pagination, ['c']) : answer(pagination, ['a', 'b']));
    case 'none':
      return () => answer(pagination, ['a', 'b', 'c']);
  }
}

describe('the listing helpers and x-svc-pagination', () => {
  it('have a helper for every operation with x-svc-pagination, and a listed operation for every helper', () => {
    expect(paged.map((rule) => rule.operationId).sort()).toEqual(Object.keys(helpers).sort());
  });

  it.each(paged.map((rule) => [rule.operationId, rule.pagination] as const))('%s: the helper follows %o', async (operationId, pagination) => {
    const fake = fakeFetch(pages(pagination));
    const common = { fetch: fake.fetch, maxRetries: 0 };
    const clients = { app: C.createAppClient({ apiKey: 'k', secretKey: 's', ...common }), experiment: C.createExperimentClient({ deploymentKey: 'd', ...common }) };
    const items: unknown[] = [];
    for await (const item of helpers[operationId]!(clients)) items.push(item);
    expect(items).toEqual(['a', 'b', 'c']);
    const sent = fake.calls.map((call) => (pagination.parameter === undefined ? null : call.url.searchParams.get(pagination.parameter)));
    expect(sent).toEqual({ token: [null, 't2'], offset: ['0', '2'], none: [null] }[pagination.style]);
  });
});
