// The handler types are the server stubs: a missing handler, an undocumented status or a
// wrongly shaped body does not compile.
import { expectTypeOf, test } from 'vitest';
import type { Handler, Handlers, HandlerRequest, OperationId, Reply } from '../../src/http/operations.js';

declare const handlers: Handlers;

test('every implemented operation needs its handler', () => {
  expectTypeOf<keyof Handlers>().toEqualTypeOf<OperationId>();
  // @ts-expect-error createBatchEvents is missing
  const incomplete: Handlers = { createHttpApiEvents: handlers.createHttpApiEvents, createGroupIdentifications: handlers.createGroupIdentifications };
  void incomplete;
});

test('replies are the documented statuses with their bodies', () => {
  const ok: Reply<'createBatchEvents'> = { status: 200, body: { code: 200, events_ingested: 1, payload_size_bytes: 10, server_upload_time: 1 } };
  const tooLarge: Reply<'createBatchEvents'> = { status: 413, body: { code: 413, error: 'Payload too large' } };
  void ok;
  void tooLarge;
  // @ts-expect-error 404 is not documented for createBatchEvents
  const undocumented: Reply<'createBatchEvents'> = { status: 404, body: { code: 404, error: 'no' } };
  // @ts-expect-error the success body lacks events_ingested
  const incompleteBody: Reply<'createBatchEvents'> = { status: 200, body: { code: 200, payload_size_bytes: 10, server_upload_time: 1 } };
  void undocumented;
  void incompleteBody;
});

test('requests carry the typed body and parameters', () => {
  expectTypeOf<HandlerRequest<'createBatchEvents'>['body']['events'][number]['event_type']>().toEqualTypeOf<string>();
  expectTypeOf<HandlerRequest<'createGroupIdentifications'>['query']>().toHaveProperty('api_key');
  // Parameters sent as JSON text are typed as the values the validator decodes, also each
  // item of a repeated one (x-svc-json-items): the funnel steps.
  expectTypeOf<NonNullable<HandlerRequest<'getEventSegmentation'>['query']['e']>['event_type']>().toEqualTypeOf<string>();
  expectTypeOf<NonNullable<HandlerRequest<'getFunnel'>['query']['e']>[number]['event_type']>().toEqualTypeOf<string>();
  // @ts-expect-error a handler of group identification cannot answer with the upload body
  const wrong: Handler<'createGroupIdentifications'> = () => ({ status: 200, body: { code: 200, events_ingested: 1, payload_size_bytes: 1 } });
  void wrong;
});
