// OpenAPI 3.0 Schema Objects → JSON Schema (draft-07) for Ajv, with `#/components/...`
// refs resolved against the bundle they come from.
import { Ajv, type ErrorObject, type SchemaValidateFunction, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { depthExceeds } from './json-value.js';
import type { Doc } from './specs.js';

// ajv-formats is CommonJS; its default export is the function under ESM interop.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

/**
 * `x-svc-max-depth: N` on a schema: the value may nest objects and arrays at most N deep (the
 * documented depth limit of property objects), checked by Ajv keyword `svcMaxDepth`.
 */
const MAX_DEPTH_EXTENSION = 'x-svc-max-depth';

/** Keywords of OpenAPI 3.0 schemas that JSON Schema does not know and that do not validate. */
const ANNOTATIONS = new Set(['example', 'discriminator', 'xml', 'externalDocs', 'deprecated']);

/**
 * Converts one OpenAPI 3.0 schema (recursively): `nullable` becomes a `null` type (or an
 * `anyOf` with `{type: 'null'}` when there is no `type`), boolean `exclusiveMinimum` /
 * `exclusiveMaximum` become numeric bounds, `example`, `x-*` and other annotations are
 * dropped, local refs are rewritten to `<baseId>#/...`.
 */
export function toJsonSchema(schema: unknown, baseId: string): unknown {
  if (Array.isArray(schema)) return schema.map((s) => toJsonSchema(s, baseId));
  if (schema === null || typeof schema !== 'object') return schema;
  const input = schema as Doc;
  if (typeof input.$ref === 'string') {
    return { $ref: input.$ref.startsWith('#') ? `${baseId}${input.$ref}` : input.$ref };
  }
  const out: Doc = {};
  for (const [key, value] of Object.entries(input)) {
    if (key === MAX_DEPTH_EXTENSION) out.svcMaxDepth = value;
    if (key.startsWith('x-') || ANNOTATIONS.has(key) || key === 'nullable') continue;
    switch (key) {
      case 'properties':
      case 'patternProperties':
      case 'definitions':
        out[key] = Object.fromEntries(Object.entries(value as Doc).map(([k, v]) => [k, toJsonSchema(v, baseId)]));
        break;
      case 'enum':
      case 'required':
      case 'const':
      case 'default':
        out[key] = value;
        break;
      default:
        out[key] = typeof value === 'object' && value !== null ? toJsonSchema(value, baseId) : value;
    }
  }
  // OpenAPI 3.0 writes exclusive bounds as booleans next to minimum/maximum; JSON Schema
  // draft-07 as the bound itself.
  for (const [flag, bound] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']] as const) {
    if (typeof input[flag] !== 'boolean') continue;
    delete out[flag];
    if (input[flag] && typeof input[bound] === 'number') {
      out[flag] = input[bound];
      delete out[bound];
    }
  }
  if (input.nullable === true) {
    if (typeof out.type === 'string') {
      out.type = [out.type, 'null'];
      if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    } else if (Array.isArray(out.type)) {
      if (!out.type.includes('null')) out.type = [...out.type, 'null'];
    } else {
      return { anyOf: [out, { type: 'null' }] };
    }
  }
  return out;
}

function int(bits: 32 | 64) {
  const max = bits === 32 ? 2 ** 31 - 1 : Number.MAX_SAFE_INTEGER;
  const min = bits === 32 ? -(2 ** 31) : Number.MIN_SAFE_INTEGER;
  return { type: 'number' as const, validate: (n: number) => Number.isInteger(n) && n >= min && n <= max };
}

function createAjv(): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    strict: true,
    strictTypes: false, // OpenAPI schemas often put `properties` next to `allOf` without `type`
    strictRequired: false,
    allowUnionTypes: true,
    validateFormats: true,
  });
  addFormats(ajv);
  ajv.addFormat('int32', int(32));
  ajv.addFormat('int64', int(64));
  ajv.addFormat('float', { type: 'number', validate: () => true });
  ajv.addFormat('double', { type: 'number', validate: () => true });
  ajv.addFormat('byte', /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/);
  ajv.addFormat('binary', true);
  ajv.addFormat('password', true);
  // The bundle's `components` are added as one schema document so that `#/components/...`
  // refs resolve; the keyword itself validates nothing.
  ajv.addKeyword('components');
  ajv.addKeyword({
    keyword: 'svcMaxDepth',
    schemaType: 'number',
    errors: true,
    validate: function svcMaxDepth(limit: number, data: unknown): boolean {
      if (!depthExceeds(data, limit)) return true;
      (svcMaxDepth as SchemaValidateFunction).errors = [{ keyword: 'svcMaxDepth', message: `must not nest deeper than ${limit} levels`, params: { limit } }];
      return false;
    } as SchemaValidateFunction,
  });
  return ajv;
}

/** Validators of one bundle's schemas, sharing one Ajv instance per bundle. */
export class SchemaValidator {
  readonly ajv = createAjv();
  readonly baseId: string;
  private readonly cache = new Map<string, ValidateFunction>();

  constructor(name: string, doc: Doc) {
    this.baseId = `https://svc.invalid/bundles/${encodeURIComponent(name)}.json`;
    // Only `components` are needed as a ref target; every component schema is converted.
    const components = Object.fromEntries(
      Object.entries(doc.components ?? {}).map(([section, entries]) => [
        section,
        section === 'schemas'
          ? Object.fromEntries(Object.entries(entries as Doc).map(([k, v]) => [k, toJsonSchema(v, this.baseId)]))
          : {},
      ]),
    );
    this.ajv.addSchema({ $id: this.baseId, components }, this.baseId);
  }

  /** A compiled validator for an OpenAPI schema found in this bundle (inline or `$ref`). */
  compile(schema: unknown): ValidateFunction {
    const key = JSON.stringify(schema);
    let fn = this.cache.get(key);
    if (!fn) {
      fn = this.ajv.compile(toJsonSchema(schema, this.baseId) as object);
      this.cache.set(key, fn);
    }
    return fn;
  }

  validate(schema: unknown, value: unknown): { valid: boolean; errors: ErrorObject[] } {
    const fn = this.compile(schema);
    const valid = fn(value) as boolean;
    return { valid, errors: valid ? [] : [...(fn.errors ?? [])] };
  }
}

const validators = new Map<string, SchemaValidator>();

export function validatorFor(name: string, doc: Doc): SchemaValidator {
  let v = validators.get(name);
  if (!v) {
    v = new SchemaValidator(name, doc);
    validators.set(name, v);
  }
  return v;
}

export function formatErrors(errors: ErrorObject[]): string {
  return errors.map((e) => `${e.instancePath || '/'} ${e.message}${e.params ? ' ' + JSON.stringify(e.params) : ''}`).join('; ');
}
