// Two server processes share the entity tables on PostgreSQL: each has its own pool (here two
// sessions on one database). Their stores check before they write; changes made at the same
// time must end as if made one after the other, and what a process keeps of the taxonomy
// plan must follow the other's changes.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type PostgresServer, startPostgres } from '../../../../../scripts/postgres/start.mjs';
import { AnnotationStore } from '../../../src/annotations/store.js';
import { newEntry } from '../../../src/taxonomy/event-types.js';
import { TaxonomyStore } from '../../../src/taxonomy/store.js';
import { postgresSession, type PostgresSession } from '../../../src/store/postgres/sql-session.js';

const APP = 3;
const ROUNDS = 8;
let postgres: PostgresServer;
const sessions: PostgresSession[] = [];

beforeAll(async () => {
  postgres = await startPostgres();
  sessions.push(postgresSession(postgres.url), postgresSession(postgres.url));
});

afterAll(async () => {
  await Promise.all(sessions.map((session) => session.close()));
  await postgres?.stop();
});

test('a category name saved by two processes at once is created once', async () => {
  const [first, second] = sessions.map((sql) => new TaxonomyStore(sql));
  const annotations = sessions.map((sql) => new AnnotationStore(sql));
  for (let round = 0; round < ROUNDS; round++) {
    const name = `Category ${round}`;
    const saved = await Promise.all([first!.saveCategory(APP, name), second!.saveCategory(APP, name)]);
    expect(saved.filter(Boolean)).toHaveLength(1);
    const created = await Promise.all(annotations.map((store) => store.saveCategory(APP, name)));
    expect(created.filter((category) => category !== undefined)).toHaveLength(1);
  }
  expect((await first!.categories(APP)).map((category) => category.name).sort()).toEqual(Array.from({ length: ROUNDS }, (_, round) => `Category ${round}`));
});

test('an event type created by two processes at once is created once', async () => {
  const stores = sessions.map((sql) => new TaxonomyStore(sql));
  for (let round = 0; round < ROUNDS; round++) {
    const name = `Event ${round}`;
    const created = await Promise.all(
      stores.map((store) =>
        store.change(APP, async (plan) => {
          if (await plan.eventType(name)) return false;
          await plan.saveEventType(newEntry(name));
          return true;
        }),
      ),
    );
    expect(created.filter(Boolean)).toHaveLength(1);
  }
  const named = (await stores[0]!.change(APP, (plan) => plan.eventTypes())).map(({ entry }) => entry.name);
  expect(named.filter((name) => name.startsWith('Event ')).sort()).toEqual(Array.from({ length: ROUNDS }, (_, round) => `Event ${round}`));
});

test("a process reads the plan's event types again once another process changed them", async () => {
  const [reader, writer] = sessions.map((sql) => new TaxonomyStore(sql));
  await writer!.change(APP + 1, (plan) => plan.saveEventType({ ...newEntry('open'), displayName: 'Open app' }));
  expect((await reader!.eventTypeNames(APP + 1)).flags.get('open')?.display).toBe('Open app');
  await writer!.change(APP + 1, (plan) => plan.saveEventType({ ...newEntry('open'), displayName: 'App opened', deleted: true }));
  expect((await reader!.eventTypeNames(APP + 1)).flags.get('open')).toMatchObject({ display: 'App opened', deleted: true });
});
