// svc_id resolution (SEMANTICS.md, "Users and identity"): a device that sends a user_id joins
// that user; a batch changes nothing until committed.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { DEFAULT_EVENT_RULES, type EventRecord, toStoredEvent } from '../../src/model/events.js';
import { Identities } from '../../src/store/identity.js';
import { DuckDbEngine } from '../../src/store/duckdb/engine.js';
import type { StoredEvent } from '../../src/store/types.js';

test('an anonymous device is adopted by a new user and merged into a known one', () => {
  const identities = new Identities(1);
  const batch = identities.begin();
  const anonymous = batch.resolve(7, null, 'device-a');
  expect(batch.resolve(7, 'user-new', 'device-a')).toBe(anonymous);
  expect(batch.resolve(7, null, 'device-a')).toBe(anonymous);
  const known = batch.resolve(7, 'user-known', 'device-k');
  const stranger = batch.resolve(7, null, 'device-b');
  expect(stranger).not.toBe(known);
  expect(batch.resolve(7, 'user-known', 'device-b')).toBe(known);
  expect(batch.canonical(stranger!)).toBe(known);
  expect(batch.resolve(7, null, 'device-b')).toBe(known);
  expect(batch.resolve(7, null, null)).toBeNull();
  expect([anonymous, known, stranger]).toEqual([1, 2, 3]);
});

test('a device seen with a second user belongs to the second; the first keeps its id', () => {
  const batch = new Identities(1).begin();
  const first = batch.resolve(1, 'user-1', 'shared');
  const second = batch.resolve(1, 'user-2', 'shared');
  expect(second).not.toBe(first);
  expect(batch.resolve(1, null, 'shared')).toBe(second);
  expect(batch.resolve(1, 'user-1', null)).toBe(first);
  expect(batch.canonical(first!)).toBe(first);
});

test('projects are apart; a dropped batch leaves the state as it was; a committed one persists as rows', () => {
  const identities = new Identities(1);
  const dropped = identities.begin();
  dropped.resolve(1, 'user-x', null);
  const batch = identities.begin();
  expect(batch.resolve(1, 'user-x', null)).toBe(1);
  expect(batch.resolve(2, 'user-x', null)).toBe(2);
  batch.resolve(1, null, 'anon');
  batch.resolve(1, 'user-x', 'anon');
  batch.commit();
  const rows = identities.begin();
  expect(rows.resolve(2, 'user-x', null)).toBe(2);
  expect(identities.nextSvcId).toBe(4);
  expect(identities.canonical(3)).toBe(1);
  expect(batch.changes().merges).toEqual([{ from: 3, to: 1 }]);
  const restored = Identities.from(batch.changes(), identities.nextSvcId);
  expect(restored.begin().resolve(1, null, 'anon')).toBe(1);
});

test('the store keeps identities across segments and restarts; a merge moves earlier events and profile', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-identity-'));
  const event = (event_type: string, user_id: string | undefined, device_id: string | undefined, user_properties?: Record<string, unknown>) =>
    toStoredEvent({ event_type, user_id, device_id, user_properties } as EventRecord, { appId: 9, receivedAt: 1, remoteAddress: '' }, DEFAULT_EVENT_RULES);
  const load = async (engine: DuckDbEngine, name: string, events: StoredEvent[]) => {
    const path = join(dataDir, name);
    writeFileSync(path, events.map((e) => `${engine.journalLine(e)}\n`).join(''));
    await engine.loadSegment(path, name);
  };
  let engine = await DuckDbEngine.open(dataDir);
  await load(engine, 'a.ndjson', [event('Signed Up', 'user-known', 'device-k'), event('Browse', undefined, 'device-x'), event('$identify', undefined, 'device-x', { $set: { plan: 'free' } })]);
  await engine.close();
  engine = await DuckDbEngine.open(dataDir);
  await load(engine, 'b.ndjson', [event('Logged In', 'user-known', 'device-x'), event('Browse', undefined, 'device-x')]);
  const svcIds = (await engine.events(9)).map((e) => [e.event_type, e.svc_id]);
  expect(svcIds).toEqual([
    ['Signed Up', 1],
    ['Browse', 1],
    ['$identify', 1],
    ['Logged In', 1],
    ['Browse', 1],
  ]);
  expect(await engine.userProfile(9, 'user-known')).toEqual({ plan: 'free' });
  await engine.close();
  rmSync(dataDir, { recursive: true, force: true });
});
