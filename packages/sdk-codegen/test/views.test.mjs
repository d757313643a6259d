// The codegen views keep every operation and leave none of the constructs the generator mis-reads.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { test } from 'node:test';
import { COSTS, codegenView } from '../src/view.mjs';

const dist = new URL('../dist/', import.meta.url);
const apis = JSON.parse(readFileSync(new URL('apis.json', dist), 'utf8'));
const view = (name) => JSON.parse(readFileSync(new URL(`views/${name}.json`, dist), 'utf8'));

function* schemaNodes(node, at = '$') {
  if (!node || typeof node !== 'object') return;
  yield [node, at];
  for (const [key, value] of Object.entries(node)) {
    if (key !== 'example' && key !== 'examples' && !key.startsWith('x-')) yield* schemaNodes(value, `${at}.${key}`);
  }
}

test('every group has a view with all its operations', () => {
  assert.equal(readdirSync(new URL('views/', dist)).filter((f) => /^[a-z-]+\.json$/.test(f)).length, apis.length);
  for (const api of apis) {
    const ids = Object.values(view(api.name).paths).flatMap((item) => Object.values(item).map((op) => op.operationId).filter(Boolean));
    assert.deepEqual(ids.sort(), [...api.operations].sort(), api.name);
  }
});

test('no composition, written-out additionalProperties: true, boolean enum or JSON-content parameter is left', () => {
  for (const api of apis) {
    for (const [node, at] of schemaNodes(view(api.name))) {
      for (const key of ['allOf', 'anyOf', 'oneOf', 'not']) assert.ok(!(key in node), `${api.name} ${at}.${key}`);
      assert.notEqual(node.additionalProperties, true, `${api.name} ${at}`);
      if (node.type === 'boolean') assert.ok(!node.enum, `${api.name} ${at}.enum`);
      if (node.in && node.name) assert.ok(!node.content, `${api.name} ${at}: parameter with content`);
    }
  }
});

test('every change is recorded with its cost', () => {
  for (const api of apis) {
    const changes = JSON.parse(readFileSync(new URL(`views/${api.name}.changes.json`, dist), 'utf8'));
    for (const change of changes) assert.equal(change.cost, COSTS[change.kind], `${api.name} ${change.at} ${change.kind}`);
  }
});

test('an either/or rule becomes optional properties, recorded as such', () => {
  const bundle = {
    openapi: '3.0.3',
    paths: {},
    components: {
      schemas: {
        Base: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
        Record: {
          allOf: [
            { $ref: '#/components/schemas/Base' },
            {
              anyOf: [
                { type: 'object', required: ['a'], properties: { a: { type: 'string' } } },
                { type: 'object', required: ['b'], properties: { b: { type: 'string' } } },
              ],
            },
          ],
        },
      },
    },
  };
  const { doc, changes } = codegenView(bundle);
  assert.deepEqual(doc.components.schemas.Record.required, ['name']);
  assert.deepEqual(Object.keys(doc.components.schemas.Record.properties).sort(), ['a', 'b', 'name']);
  assert.deepEqual(changes.map((c) => c.kind).sort(), ['allOf-flattened', 'either-or']);
  assert.ok(bundle.components.schemas.Record.allOf, 'the bundle itself is left alone');
});

test('the page parameters of every listing are marked for the templates', () => {
  for (const api of apis) {
    for (const item of Object.values(view(api.name).paths)) {
      for (const op of Object.values(item)) {
        const pagination = op?.['x-svc-pagination'];
        if (!pagination) continue;
        const marked = (key) => (op.parameters ?? []).filter((p) => p[key]).map((p) => p.name);
        assert.deepEqual(marked('x-svc-page-parameter'), pagination.parameter ? [pagination.parameter] : [], op.operationId);
        assert.deepEqual(marked('x-svc-page-limit'), pagination.limit ? [pagination.limit] : [], op.operationId);
      }
    }
  }
});
