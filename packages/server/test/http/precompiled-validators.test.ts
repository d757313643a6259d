// The server compiles every operation's validators before it listens (app.ts,
// `compileOperation`): a schema compiled by its first request held the event loop for up to
// ~90 ms. This holds `compileOperation` to every schema `parseOperationRequest` checks, for
// every documented parameter, repeated JSON item and request body.
import { Ajv } from 'ajv';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { compileOperation, deref, operations, parseOperationRequest, type Doc, type OperationRef } from '@svc/openapi-validation';

/** Requests of the operation that reach every check: each parameter given, once per body media type (or without a body). */
function requestsReachingEveryCheck(ref: OperationRef): Parameters<typeof parseOperationRequest>[1][] {
  const query = new URLSearchParams();
  const headers = new Map<string, string>();
  const pathParams: Record<string, string> = {};
  for (const param of [...((ref.pathItem.parameters as Doc[]) ?? []), ...((ref.op.parameters as Doc[]) ?? [])]) {
    const { in: where, name } = deref<Doc>(ref.bundle.doc, param);
    // `{}` parses as JSON for `content` parameters and JSON items, and is some text for the others.
    if (where === 'query') query.append(name, '{}');
    else if (where === 'header') headers.set(name.toLowerCase(), '{}');
    else if (where === 'path') pathParams[name] = '{}';
  }
  const body = ref.op.requestBody ? deref<Doc>(ref.bundle.doc, ref.op.requestBody) : undefined;
  const mediaTypes = Object.keys((body?.content as Doc | undefined) ?? {});
  if (mediaTypes.length === 0) return [{ query, headers, pathParams }];
  return mediaTypes.map((mediaType) => ({
    query,
    headers: new Map([...headers, ['content-type', mediaType]]),
    pathParams,
    body: mediaType === 'application/x-www-form-urlencoded' ? 'field=1' : '{}',
  }));
}

describe('validators compiled before the first request', () => {
  afterEach(() => vi.restoreAllMocks());

  it('leaves no schema to compile to any request of any operation', () => {
    const all = operations();
    for (const ref of all) compileOperation(ref);
    const compile = vi.spyOn(Ajv.prototype, 'compile');
    const validate = vi.spyOn(Ajv.prototype, 'validate');
    let checked = 0;
    for (const ref of all) {
      for (const request of requestsReachingEveryCheck(ref)) {
        parseOperationRequest(ref, request);
        checked++;
      }
    }
    expect(all.length).toBeGreaterThanOrEqual(55);
    expect(checked).toBeGreaterThanOrEqual(all.length);
    expect(validate).not.toHaveBeenCalled();
    expect(compile.mock.calls.map(([schema]) => JSON.stringify(schema).slice(0, 200))).toEqual([]);
  });
});
