// Concurrent reporting on one project (support/bursts.ts): first on a project without events,
// then after events were seeded, some bursts right after a batch (a load under way).
// FUZZ_BURSTS sets the bursts per test.
import fc from 'fast-check';
import { afterAll, beforeAll, test } from 'vitest';
import { burstProperty } from './support/bursts.js';
import { sent } from './support/check.js';
import { type RunningServer, startServer } from './support/engines.js';
import { SEED, assertProperty } from './support/property.js';
import { seedEvents } from './support/seed.js';

const BURSTS = Number(process.env.FUZZ_BURSTS ?? 40);

let server: RunningServer;
beforeAll(async () => {
  server = await startServer();
  console.log(`bursts on ${server.engine} with FUZZ_SEED=${SEED} against ${server.url}`);
});
afterAll(async () => {
  console.log(`${sent.requests} concurrent reporting requests sent to ${server?.engine}`);
  await server?.stop();
});

const replay = (name: string) => `npx vitest run --project ${server.engine} concurrency.test.ts -t '${name}' (the curl lines of a burst run at once: end each with &, then wait)`;

test('bursts of reporting requests on a project without events are answered as documented', async () => {
  await assertProperty(burstProperty(server, fc.constant(false)), BURSTS, replay('without events'));
});

test('bursts of reporting requests after events were ingested are answered as documented', async () => {
  await seedEvents(server);
  await assertProperty(burstProperty(server, fc.boolean()), BURSTS, replay('after events'));
});
