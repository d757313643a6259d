// The breaking-change gate (scripts/changes.mjs, Optic's breaking-changes standard plus
// operationIds) on a fixture changed one way at a time: each breaking kind fails unless the
// major version goes up; an addition needs a higher version and becomes a changelog entry.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { apiChanges, compareVersions, verdict } from '../scripts/changes.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const basePath = join(here, 'fixtures/breaking/base.yaml');
const base = () => parse(readFileSync(basePath, 'utf8'));
const scratch = mkdtempSync(join(tmpdir(), 'svc-gate-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The gate's verdict on the fixture changed by `change`, its version kept, and `at` another version. */
function judged(name, change) {
  const doc = base();
  change(doc);
  const path = join(scratch, `${name}.json`);
  writeFileSync(path, JSON.stringify(doc));
  const changes = apiChanges(basePath, path);
  const at = (head) => verdict('fixture', { ...changes, versions: { ...changes.versions, head } });
  return { changes, ...verdict('fixture', changes), at };
}

const createBody = (doc) => doc.paths['/items'].post.requestBody.content['application/json'].schema;

const BREAKING = [
  ['a removed operation', (doc) => delete doc.paths['/items/{id}'].delete, /DELETE \/items\/\{id\}: .*cannot remove an operation/],
  ['a removed response field', (doc) => delete doc.components.schemas.Item.properties.size, /cannot remove response property 'size'/],
  ['a new required request field', (doc) => createBody(doc).required.push('size'), /cannot make a request property required/],
  ['a new required query parameter', (doc) => doc.paths['/items'].get.parameters.push({ name: 'owner', in: 'query', required: true, schema: { type: 'string' } }), /cannot add required query parameter owner/],
  ['a narrowed request type', (doc) => (createBody(doc).properties.size = { type: 'integer' }), /request body property 'size' not to be narrowed/],
  ['a narrowed request enum', (doc) => (createBody(doc).properties.color.enum = ['red', 'green']), /POST \/items: .*enum/i],
  ['a narrowed parameter enum', (doc) => (doc.paths['/items'].get.parameters[0].schema.enum = ['a', 'b']), /GET \/items: .*enum/i],
  ['a changed operationId', (doc) => (doc.paths['/items'].get.operationId = 'getItems'), /GET \/items: operationId changed \(listItems → getItems\)/],
];

describe('breaking changes', () => {
  it.each(BREAKING)('%s fails the gate, and passes with a new major version', (name, change, reason) => {
    const { changes, problems, at } = judged(name, change);
    expect(changes.breaking.join('\n')).toMatch(reason);
    expect(problems.join('\n')).toMatch(/fixture: \d+ breaking change\(s\) since 1\.2\.0 \(a new major version, not 1\.2\.0, would be needed\)/);
    expect(at('1.3.0').problems.join('\n')).toMatch(/breaking change/);
    expect(at('2.0.0').problems).toEqual([]);
  }, 60_000);
});

describe('other changes', () => {
  const addition = (doc) => (doc.paths['/items/{id}'].get = { operationId: 'getItem', parameters: doc.paths['/items/{id}'].delete.parameters, responses: { 200: { description: 'The item.' } } });

  it('an added operation needs a higher version and is the changelog entry', () => {
    const same = judged('added', addition);
    expect(same.changes.breaking).toEqual([]);
    expect(same.problems).toEqual(['fixture: changed since 1.2.0 but info.version is 1.2.0: raise it (a minor version for additions, a patch for fixes)']);
    const raised = same.at('1.3.0');
    expect(raised.problems).toEqual([]);
    expect(raised.entry).toMatch(/^### fixture 1\.3\.0\n\n- GET \/items\/\{id\}: added/);
  }, 60_000);

  it('an unchanged API passes with its version', () => {
    expect(judged('same', () => undefined)).toMatchObject({ changes: { breaking: [], changes: [] }, problems: [], entry: '' });
  });

  it('compares versions part by part', () => {
    expect(compareVersions('1.10.0', '1.9.3')).toBeGreaterThan(0);
    expect(compareVersions('2.0', '2.0.0')).toBe(0);
    expect(compareVersions('1.2.0', '1.2.1')).toBeLessThan(0);
  });
});
