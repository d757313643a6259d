// The long run (`npm run fuzz:long`, FUZZ_LONG=1): rounds of every operation's property and of
// the concurrent bursts, each round on a new seed, until FUZZ_REQUESTS requests were sent
// (default 50,000 per engine). It goes on past failures: every failing answer is counted by
// its kind, a kind's first failure is shrunk to a minimal request (its replay kept), and the
// later failures of a known kind pass so that the property goes on finding others. At the
// end: requests sent and failures by kind, each with its minimal replay; it fails if any.
import { operations } from '@svc/openapi-validation';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { requestArbitrary } from './support/arbitraries.js';
import { burstProperty } from './support/bursts.js';
import { AnswerFailure, expectDocumentedAnswer, sent } from './support/check.js';
import { type RunningServer, startServer } from './support/engines.js';
import { SEED, parameters } from './support/property.js';
import type { FuzzRequest } from './support/requests.js';
import { seedEvents } from './support/seed.js';

const TARGET = Number(process.env.FUZZ_REQUESTS ?? 50_000);
const RUNS_PER_ROUND = Number(process.env.FUZZ_RUNS ?? 25);
const BURSTS_PER_ROUND = 20;

let server: RunningServer;
beforeAll(async () => {
  server = await startServer();
  await seedEvents(server);
});
afterAll(() => server?.stop());

interface Kind {
  failures: number;
  replay?: string;
}
const kinds = new Map<string, Kind>();

/** Counts a failing answer; throws (so that fast-check shrinks it) only for a kind not seen yet. */
async function counted(check: () => Promise<void>): Promise<void> {
  try {
    await check();
  } catch (error) {
    const kind = error instanceof AnswerFailure ? error.kind : `not an answer: ${(error as Error).message.slice(0, 160)}`;
    const known = kinds.get(kind);
    if (known?.replay !== undefined) return void known.failures++;
    kinds.set(kind, { failures: (known?.failures ?? 0) + 1 });
    throw error;
  }
}

/** Keeps the shrunk counterexample of a failed run as its kind's replay. */
function keepReplay<T>(details: fc.RunDetails<T>): void {
  if (!details.failed) return;
  const error = details.errorInstance;
  const kind = error instanceof AnswerFailure ? error.kind : `not an answer: ${(error as Error).message.slice(0, 160)}`;
  const entry = kinds.get(kind) ?? { failures: 1 };
  entry.replay = `${fc.stringify(details.counterexample)} (FUZZ_SEED=${details.seed} FUZZ_PATH=${details.counterexamplePath})`;
  kinds.set(kind, entry);
}

test(`the server answers ${TARGET} generated requests as the spec documents`, { timeout: 6 * 3600_000 }, async () => {
  const started = performance.now();
  const properties = operations().map((ref) =>
    fc.asyncProperty(requestArbitrary(ref, server, server.url), (request: FuzzRequest) => counted(() => expectDocumentedAnswer(server, request))),
  );
  const bursts = burstProperty(server, fc.boolean(), counted);
  for (let round = 0; sent.requests < TARGET; round++) {
    for (const property of properties) keepReplay(await fc.check(property, parameters(RUNS_PER_ROUND, SEED + round)));
    keepReplay(await fc.check(bursts, parameters(BURSTS_PER_ROUND, SEED + round)));
    const failures = [...kinds.values()].reduce((sum, k) => sum + k.failures, 0);
    console.log(`round ${round + 1} (FUZZ_SEED=${SEED + round}): ${sent.requests} requests, ${failures} failures of ${kinds.size} kinds, ${((performance.now() - started) / 1000).toFixed(0)} s`);
  }
  const table = [...kinds].sort((a, b) => b[1].failures - a[1].failures).map(([kind, { failures, replay }]) => `${String(failures).padStart(6)}  ${kind}\n        ${replay ?? '(no replay: found while shrinking another kind)'}`);
  const seconds = (performance.now() - started) / 1000;
  console.log(`${server.engine}: ${sent.requests} requests in ${seconds.toFixed(0)} s (${(sent.requests / seconds).toFixed(0)}/s), ${kinds.size} kinds of failure:\n${table.join('\n')}`);
  expect(kinds.size, table.join('\n')).toBe(0);
});
