// fast-check arbitraries of an operation's requests, from the bundle's schemas: values within
// each schema's bounds, with the boundary values of boundaries.ts mixed in, optional
// parameters present or not, every content type, and half of the time one mutation
// (requests.ts). They shrink towards fewer optional parameters, no mutation and the values'
// simplest forms, so a failure is reported as a minimal request.
import { type Doc, type OperationRef, deref, resolvePointer } from '@svc/openapi-validation';
import fc from 'fast-check';
import { boundaryInteger, boundaryNumber, longHeaderValue, nonUtf8, reportDays, text } from './boundaries.js';
import { type FuzzRequest, type Keys, type Mutation, type RequestValues, SIMPLE_MUTATIONS, buildRequest } from './requests.js';

/** Schemas nested deeper than this (recursive ones) become an empty object. */
const MAX_DEPTH = 12;
const REPORT_DATE = '^\\d{4}(0[1-9]|1[0-2])(0[1-9]|[12]\\d|3[01])$';

const maybeNullable = (schema: Doc, arbitrary: fc.Arbitrary<unknown>) => (schema.nullable ? fc.option(arbitrary, { nil: null, freq: 8 }) : arbitrary);

/** Within bounds mostly, at the boundaries sometimes. */
const mostlyWithin = (within: fc.Arbitrary<unknown>, boundary: fc.Arbitrary<unknown>) => fc.oneof({ arbitrary: within, weight: 4 }, { arbitrary: boundary, weight: 1 });

function stringArbitrary(schema: Doc): fc.Arbitrary<string> {
  if (schema.pattern === REPORT_DATE) return reportDays();
  if (typeof schema.pattern === 'string') return fc.stringMatching(new RegExp(schema.pattern), { maxLength: 64 });
  switch (schema.format) {
    case 'date-time':
      return fc.date({ min: new Date(0), max: new Date(Date.UTC(9999, 11, 31)), noInvalidDate: true }).map((d) => d.toISOString());
    case 'date':
      return reportDays().map((day) => `${day.slice(0, 4)}-${day.slice(4, 6)}-${day.slice(6)}`);
    case 'email':
      return fc.emailAddress();
    case 'uri':
      return fc.webUrl();
  }
  const min = Number(schema.minLength ?? 0);
  return text.map((s) => (s.length >= min ? s : s.padEnd(min, 'x')));
}

function numberArbitrary(schema: Doc): fc.Arbitrary<unknown> {
  const exclusive = schema.exclusiveMinimum === true;
  if (schema.type === 'integer') {
    // Unbounded integers up to 2 million above the minimum: sizes a server allocates by (windows, counts) reach the millions.
    const min = Math.max(Number(schema.minimum ?? -1_000_000) + (exclusive ? 1 : 0), Number.MIN_SAFE_INTEGER);
    const max = Math.min(Number(schema.maximum ?? min + 2_000_000), Number.MAX_SAFE_INTEGER);
    return mostlyWithin(fc.integer({ min, max }), boundaryInteger);
  }
  const min = Number(schema.minimum ?? -1e6);
  const max = Number(schema.maximum ?? min + 2e6);
  return mostlyWithin(fc.double({ min, max, noNaN: true, minExcluded: exclusive }), boundaryNumber);
}

function objectArbitrary(doc: Doc, schema: Doc, depth: number): fc.Arbitrary<unknown> {
  const properties = Object.entries((schema.properties ?? {}) as Doc);
  if (properties.length === 0 && schema.additionalProperties) {
    const values = schema.additionalProperties === true ? fc.oneof(text, fc.integer(), fc.boolean()) : schemaArbitrary(doc, schema.additionalProperties, depth + 1);
    return fc.dictionary(text, values, { maxKeys: 3, minKeys: Number(schema.minProperties ?? 0) });
  }
  const record = Object.fromEntries(properties.map(([name, property]) => [name, schemaArbitrary(doc, property, depth + 1)]));
  return fc.record(record, { requiredKeys: (schema.required as string[] | undefined) ?? [] });
}

/** An arbitrary of the values of an OpenAPI schema of the bundle `doc`. */
export function schemaArbitrary(doc: Doc, node: unknown, depth = 0): fc.Arbitrary<unknown> {
  if (depth > MAX_DEPTH) return fc.constant({});
  const schema = (node ?? {}) as Doc;
  if (typeof schema.$ref === 'string') return schemaArbitrary(doc, resolvePointer(doc, schema.$ref), depth + 1);
  if (Array.isArray(schema.enum)) return maybeNullable(schema, fc.constantFrom(...(schema.enum as unknown[])));
  if (Array.isArray(schema.allOf)) {
    const parts = (schema.allOf as unknown[]).map((part) => schemaArbitrary(doc, part, depth + 1));
    return fc.tuple(...parts).map((values) => Object.assign({}, ...values.filter((v) => v !== null && typeof v === 'object')));
  }
  const alternatives = (schema.oneOf ?? schema.anyOf) as unknown[] | undefined;
  if (alternatives) return maybeNullable(schema, fc.oneof(...alternatives.map((alternative) => schemaArbitrary(doc, alternative, depth + 1))));
  const arbitrary = (() => {
    switch (schema.type) {
      case 'string':
        return stringArbitrary(schema);
      case 'integer':
      case 'number':
        return numberArbitrary(schema);
      case 'boolean':
        return fc.boolean();
      case 'array': {
        const minLength = Number(schema.minItems ?? 0);
        const maxLength = Math.min(Number(schema.maxItems ?? Infinity), minLength + 3);
        return fc.array(schemaArbitrary(doc, schema.items, depth + 1), { minLength, maxLength });
      }
      case 'object':
        return objectArbitrary(doc, schema, depth);
      default:
        return schema.properties ? objectArbitrary(doc, schema, depth) : fc.oneof(text, fc.integer(), fc.boolean());
    }
  })();
  return maybeNullable(schema, arbitrary);
}

export const parametersOf = (ref: OperationRef): Doc[] => [...((ref.pathItem.parameters as unknown[]) ?? []), ...((ref.op.parameters as unknown[]) ?? [])].map((p) => deref<Doc>(ref.bundle.doc, p));

/** A parameter's value: a JSON `content` value, the items of an `x-svc-json-items` list, or a schema's value. */
function parameterArbitrary(ref: OperationRef, param: Doc): fc.Arbitrary<unknown> {
  const doc = ref.bundle.doc;
  if (param.content) return schemaArbitrary(doc, (Object.values(param.content as Doc)[0] as Doc).schema);
  const itemsPointer = param['x-svc-json-items'] as string | undefined;
  if (itemsPointer) {
    const schema = deref<Doc>(doc, param.schema);
    return fc.array(schemaArbitrary(doc, { $ref: itemsPointer }), { minLength: Number(schema.minItems ?? 1), maxLength: 3 });
  }
  return schemaArbitrary(doc, param.schema);
}

/** One way to break a request; bodies that are not UTF-8 only where the operation takes a body (fetch sends none with GET). */
const mutationArbitrary = (takesBody: boolean): fc.Arbitrary<Mutation> =>
  fc.oneof(
    { arbitrary: fc.constantFrom(...SIMPLE_MUTATIONS).map((kind): Mutation => ({ kind })), weight: SIMPLE_MUTATIONS.length },
    longHeaderValue.map((value): Mutation => ({ kind: 'long header', value })),
    ...(takesBody ? [nonUtf8.map((bytes): Mutation => ({ kind: 'non-UTF-8 body', bytes }))] : []),
  );

/** A parameter or top-level body property held at one value (the sweep over every enum value). */
export interface Pin {
  in: 'parameter' | 'body';
  name: string;
  value: unknown;
}

export interface RequestOptions {
  /** Whether a request may be broken on purpose (default true). */
  mutations?: boolean;
  pin?: Pin;
}

/** The operation's requests, with the credentials of `keys`; each prints as a curl line against `baseUrl`. */
export function requestArbitrary(ref: OperationRef, keys: Keys, baseUrl: string, options: RequestOptions = {}): fc.Arbitrary<FuzzRequest> {
  const { pin, mutations = true } = options;
  const params = parametersOf(ref).map((param) => {
    if (pin?.in === 'parameter' && pin.name === param.name) return fc.constant({ param, value: pin.value });
    const value = parameterArbitrary(ref, param).map((v) => ({ param, value: v }));
    // Optional parameters present half of the time: every combination of them comes up.
    return param.required === true || param.in === 'path' ? value : fc.option(value, { freq: 2, nil: undefined });
  });
  const requestBody = ref.op.requestBody ? deref<Doc>(ref.bundle.doc, ref.op.requestBody) : undefined;
  const body = requestBody
    ? fc.oneof(
        ...Object.entries(requestBody.content as Doc).map(([contentType, media]) =>
          schemaArbitrary(ref.bundle.doc, (media as Doc).schema).map((value) => {
            const pinned = pin?.in === 'body' && value !== null && typeof value === 'object' && !Array.isArray(value) ? { ...value, [pin.name]: pin.value } : value;
            return { contentType, media: media as Doc, value: pinned };
          }),
        ),
      )
    : fc.constant(undefined);
  const mutation = mutations ? fc.option(mutationArbitrary(requestBody !== undefined), { freq: 2, nil: undefined }) : fc.constant(undefined);
  return fc
    .record({ params: fc.tuple(...params), body, mutation })
    .map((values): RequestValues => ({ params: values.params.filter((p) => p !== undefined), body: values.body, mutation: values.mutation }))
    .map((values) => buildRequest(ref, values, keys, baseUrl));
}

/** Each value of each enum of the operation's parameters and top-level body properties. */
export function enumPins(ref: OperationRef): Pin[] {
  const doc = ref.bundle.doc;
  const values = (schema: unknown): unknown[] => {
    const s = deref<Doc>(doc, schema ?? {});
    return (s.enum as unknown[] | undefined) ?? (s.items ? (deref<Doc>(doc, s.items).enum as unknown[] | undefined) ?? [] : []);
  };
  const pins: Pin[] = parametersOf(ref).flatMap((param) => values(param.schema).map((value) => ({ in: 'parameter' as const, name: param.name as string, value })));
  const requestBody = ref.op.requestBody ? deref<Doc>(doc, ref.op.requestBody) : undefined;
  const media = requestBody ? (Object.values(requestBody.content as Doc)[0] as Doc) : undefined;
  const properties = (media ? deref<Doc>(doc, media.schema).properties : undefined) as Doc | undefined;
  for (const [name, property] of Object.entries(properties ?? {})) pins.push(...values(property).map((value) => ({ in: 'body' as const, name, value })));
  return pins;
}
