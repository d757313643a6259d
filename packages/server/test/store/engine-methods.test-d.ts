// ENGINE_METHODS is checked against the engine's interfaces: an engine method without its
// entry, or an entry that does not fit the method, does not compile; the store's pass-throughs
// generated from it have the engine's types.
import { expectTypeOf, test } from 'vitest';
import { ENGINE_METHODS, type EngineCalls, type MethodTable } from '../../src/store/engine-methods.js';
import type { JournalledStore } from '../../src/store/journalled-store.js';
import type { Engine, Store } from '../../src/store/types.js';

test('a method of the interfaces missing from the table does not compile', () => {
  // What adding `purgeProject` to Engine without a table entry amounts to.
  // @ts-expect-error purgeProject is missing from ENGINE_METHODS
  const withNewMethod: MethodTable<EngineCalls & { purgeProject(appId: number): Promise<void> }> = ENGINE_METHODS;
  void withNewMethod;
  const { scrubDeletionJob, ...withoutScrub } = ENGINE_METHODS;
  void scrubDeletionJob;
  // @ts-expect-error scrubDeletionJob is missing
  const incomplete: MethodTable<EngineCalls> = withoutScrub;
  void incomplete;
});

test('an entry must fit its method', () => {
  // @ts-expect-error recentInsertIds is an async iterable: it crosses as a stream
  const callNotStream: MethodTable<EngineCalls> = { ...ENGINE_METHODS, recentInsertIds: 'call, store' };
  // @ts-expect-error profileProperties is not the store's (not in Engine)
  const notTheStores: MethodTable<EngineCalls> = { ...ENGINE_METHODS, profileProperties: 'call, store' };
  // @ts-expect-error no such engine method
  const extra: MethodTable<EngineCalls> = { ...ENGINE_METHODS, purgeProject: 'call' };
  void callNotStream;
  void notTheStores;
  void extra;
});

test("the store's generated pass-throughs have the engine's types", () => {
  expectTypeOf<JournalledStore['events']>().toEqualTypeOf<Engine['events']>();
  expectTypeOf<JournalledStore['recentInsertIds']>().toEqualTypeOf<Engine['recentInsertIds']>();
  expectTypeOf<JournalledStore['timelineFunnel']>().toEqualTypeOf<Engine['timelineFunnel']>();
  expectTypeOf<JournalledStore>().toExtend<Store>();
  // Loading is the journal's: the store does not answer it.
  expectTypeOf<JournalledStore>().not.toHaveProperty('loadSegment');
});
