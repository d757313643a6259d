// The DuckDB engine's scrub of a deletion job is one transaction: the users' events,
// profiles, identities and cohort memberships, their mappings (SharedEntities) and the
// record of the scrub go together or not at all.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { DuckDbEngine } from '../../src/store/duckdb/engine.js';
import { stored } from '../store/clickhouse/engines.js';

const APP = 7;
const T0 = Date.UTC(2026, 10, 1);

let dataDir: string;
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

test('a scrub whose mapping step fails leaves everything in place; run again, it removes the users and records the scrub', async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-scrub-'));
  const engine = await DuckDbEngine.open(dataDir);
  const events = [
    { event_type: '$identify', user_id: 'ada', device_id: 'd1', time: T0, user_properties: { $set: { plan: 'pro' } } },
    { event_type: 'open', user_id: 'ada', device_id: 'd1', time: T0 + 1 },
    { event_type: 'open', user_id: 'bob', device_id: 'd2', time: T0 + 2 },
  ].map((event, i) => stored(event, i, APP, T0));
  const segment = join(dataDir, 'segment-1.jsonl');
  writeFileSync(segment, `${events.map((event) => engine.journalLine(event)).join('\n')}\n`);
  await engine.loadSegment(segment, 'segment-1');
  await engine.applyUserMappings([APP], [{ userId: 'ada', globalUserId: 'bob' }]);
  const ada = (await engine.svcIdsOfUsers(APP, ['ada'])).get('ada')!;
  await engine.replaceCohortMembers(APP, 'c1', [ada]);
  await engine.addDeletionEntries(APP, '2026-11-10', [{ svcId: ada, requester: null, requestedOnDay: '2026-11-01' }]);
  const state = async () => ({
    events: (await engine.events(APP)).map((e) => e.user_id),
    profile: await engine.userProfile(APP, 'ada'),
    ada: (await engine.svcIdsOfUsers(APP, ['ada'])).get('ada'),
    cohort: await engine.cohortMembers(APP, 'c1'),
    mappings: (await engine.userMappings(APP, ['bob'])).get('bob')?.mappedFrom,
    due: await engine.dueDeletionJobs('2026-11-10'),
    devices: await engine.devicesOfDeletionJob(APP, '2026-11-10'),
  });
  const before = await state();
  expect(before).toEqual({
    events: ['ada', 'ada', 'bob'],
    profile: { plan: 'pro' },
    ada,
    cohort: [ada],
    mappings: [{ svcId: ada, userId: 'ada' }],
    due: [{ appId: APP, day: '2026-11-10' }],
    devices: ['d1'],
  });

  // The mappings' table away: the scrub fails at its SharedEntities step, after the engine's deletes.
  await engine.sql.run('ALTER TABLE user_mappings RENAME TO user_mappings_away');
  await expect(engine.scrubDeletionJob(APP, '2026-11-10', '2026-11-10')).rejects.toThrow(/user_mappings/);
  await engine.sql.run('ALTER TABLE user_mappings_away RENAME TO user_mappings');
  expect(await state()).toEqual(before);

  await engine.scrubDeletionJob(APP, '2026-11-10', '2026-11-10');
  expect(await state()).toEqual({ events: ['bob'], profile: undefined, ada: undefined, cohort: [], mappings: [], due: [], devices: [] });
  expect((await engine.deletionJobs(APP, '2026-11-10', '2026-11-10'))[0]?.scrubbedOn).toBe('2026-11-10');
  await engine.close();
});
