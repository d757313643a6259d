import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { rulesetFor } from '../rules/ruleset.js';
import { readFileSync } from 'node:fs';
import { distDir, duplicateOperationIds, listApis } from '../scripts/apis.mjs';
import { lintFile } from '../scripts/spectral.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const ownRules = Object.keys(rulesetFor('sources').rules).filter((name) => name.startsWith('svc-'));

describe('the project ruleset on a broken fixture', async () => {
  const results = await lintFile(join(here, 'fixtures/broken/openapi.yaml'), 'sources');
  const messages = (code) => results.filter((r) => r.code === code).map((r) => r.message);

  it.each(ownRules)('%s fires', (rule) => {
    expect(messages(rule).length, `${rule} did not fire`).toBeGreaterThan(0);
  });

  it('names the expected spelling for a near miss and flags unknown names', () => {
    expect(messages('svc-property-spelling')).toEqual(
      expect.arrayContaining([
        'Property "userId" is spelled "user_id" in the interface documents.',
        expect.stringContaining('Property "fooBar" is not in the glossary'),
      ]),
    );
  });

  it('rejects a verb that does not fit the method and a file not named after the operationId', () => {
    expect(messages('svc-operation-id-convention')[0]).toContain('operationId "sendEvents" must be one of create<Noun> for POST');
    expect(messages('svc-operation-file-named-by-id')[0]).toContain('named after its operationId "sendEvents"');
  });

  it('requires x-svc-credentials for an open operation and a documented x-svc-invalid-credentials-status', () => {
    expect(messages('svc-operation-security')).toEqual([
      expect.stringContaining('has no x-svc-credentials'),
      'x-svc-invalid-credentials-status 403 is not a documented response of the operation.',
    ]);
  });

  it('requires x-svc-pagination of a listing and checks it against the operation', () => {
    expect(messages('svc-pagination-declared')).toEqual([expect.stringContaining('Listing listThings does not declare x-svc-pagination')]);
    expect(messages('svc-pagination-shape')).toEqual([
      'x-svc-pagination on a POST: only a GET lists.',
      'x-svc-pagination of style token needs next.',
      'x-svc-pagination.parameter `page_token` is not a query parameter of the operation.',
      'x-svc-pagination.items `things` is not an array member of the 200 JSON answer.',
    ]);
  });

  it('reports a code that differs from the status in schema and example', () => {
    expect(messages('svc-error-code-matches-status')).toEqual(
      expect.arrayContaining([expect.stringContaining('example has code 201 in a 200 response'), expect.stringContaining('schema allows code [201]')]),
    );
  });
});

describe('the specs themselves', () => {
  it.each(listApis())('$name sources lint clean', async ({ root }) => {
    const problems = (await lintFile(root, 'sources')).filter((r) => r.severity <= 1);
    expect(problems.map((r) => `${r.code} ${r.path.join('.')}: ${r.message}`)).toEqual([]);
  });
});

describe('operationIds across APIs', () => {
  it('finds an operationId that two APIs use', () => {
    const index = [
      { name: 'reporting', operations: ['listEventTypes', 'getFunnel'] },
      { name: 'taxonomy', operations: ['listEventTypes', 'createEventType'] },
    ];
    expect(duplicateOperationIds(index)).toEqual([{ id: 'listEventTypes', apis: ['reporting', 'taxonomy'] }]);
  });

  it('are unique in the bundles', () => {
    expect(duplicateOperationIds(JSON.parse(readFileSync(join(distDir, 'apis.json'), 'utf8')))).toEqual([]);
  });
});
