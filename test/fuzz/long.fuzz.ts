// The long run (`npm run fuzz:long`, FUZZ_LONG=1): rounds of every operation's property and of
// the concurrent bursts, each round on a new seed, until FUZZ_REQUESTS requests were sent
// (default 50,000 per engine). It goes on past failures: every failing answer is counted by
// its kind, a kind's first failure is shrunk to a minimal request (its replay kept), and the
// later failures of a known kind pass so that the property goes on finding others; after a
// request that leaves the server dead or unanswering, a fresh server (seeded again) takes
// over. At the end: requests sent and failures by kind, each with its minimal replay; it
// fails if there were any.
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

/** Whether the server answers a plain request within 5 s. */
const answers = () => fetch(`${server.url}/api/2/events/list`, { signal: AbortSignal.timeout(5_000) }).then(() => true, () => false);

/** A server that died or stopped answering (a request that made it allocate without end) is replaced by a fresh one, seeded again. */
async function restartIfGone(): Promise<boolean> {
  if (server.child.exitCode === null && server.child.signalCode === null && (await answers())) return false;
  console.log(`the server stopped answering: a fresh one is started (${restarts + 1} so far)`);
  await server.stop();
  server = await startServer();
  await seedEvents(server);
  restarts++;
  return true;
}
let restarts = 0;

interface Kind {
  failures: number;
  replay?: string;
}
const kinds = new Map<string, Kind>();

/** Kinds after which the server answers nothing more: the property ends there (and the server is replaced). */
const leavesServerGone = (kind: string) => kind.startsWith('the server exited') || / no answer /.test(kind);

/** Counts a failing answer; throws (so that fast-check shrinks it) only for a kind not seen yet, or one that left the server gone. */
async function counted(check: () => Promise<void>): Promise<void> {
  try {
    await check();
  } catch (error) {
    const kind = error instanceof AnswerFailure ? error.kind : `not an answer: ${(error as Error).message.slice(0, 160)}`;
    const known = kinds.get(kind);
    if (known?.replay !== undefined && !leavesServerGone(kind)) return void known.failures++;
    kinds.set(kind, { ...known, failures: (known?.failures ?? 0) + 1 });
    throw error;
  }
}

/** Keeps the shrunk counterexample of a failed run as its kind's replay. */
function keepReplay<T>(details: fc.RunDetails<T>): void {
  if (!details.failed) return;
  const error = details.errorInstance;
  const kind = error instanceof AnswerFailure ? error.kind : `not an answer: ${(error as Error).message.slice(0, 160)}`;
  const entry = kinds.get(kind) ?? { failures: 1 };
  entry.replay ??= `${fc.stringify(details.counterexample)} (FUZZ_SEED=${details.seed} FUZZ_PATH=${details.counterexamplePath})`;
  kinds.set(kind, entry);
}

test(`the server answers ${TARGET} generated requests as the spec documents`, { timeout: 6 * 3600_000 }, async () => {
  const started = performance.now();
  // Built again for each server: a request carries its keys and address.
  const build = () => ({
    properties: operations().map((ref) => fc.asyncProperty(requestArbitrary(ref, server, server.url), (request: FuzzRequest) => counted(() => expectDocumentedAnswer(server, request)))),
    bursts: burstProperty(server, fc.boolean(), counted),
  });
  let { properties, bursts } = build();
  for (let round = 0; sent.requests < TARGET; round++) {
    for (const property of [...properties, bursts]) {
      const runs = property === bursts ? BURSTS_PER_ROUND : RUNS_PER_ROUND;
      keepReplay(await fc.check(property as fc.IAsyncProperty<unknown>, parameters(runs, SEED + round)));
      if (await restartIfGone()) ({ properties, bursts } = build());
    }
    const failures = [...kinds.values()].reduce((sum, k) => sum + k.failures, 0);
    console.log(`round ${round + 1} (FUZZ_SEED=${SEED + round}): ${sent.requests} requests, ${failures} failures of ${kinds.size} kinds, ${restarts} server restarts, ${((performance.now() - started) / 1000).toFixed(0)} s`);
  }
  const table = [...kinds].sort((a, b) => b[1].failures - a[1].failures).map(([kind, { failures, replay }]) => `${String(failures).padStart(6)}  ${kind}\n        ${replay ?? '(no replay: found while shrinking another kind)'}`);
  const seconds = (performance.now() - started) / 1000;
  console.log(`${server.engine}: ${sent.requests} requests in ${seconds.toFixed(0)} s (${(sent.requests / seconds).toFixed(0)}/s), ${restarts} server restarts, ${kinds.size} kinds of failure:\n${table.join('\n')}`);
  expect(kinds.size, table.join('\n')).toBe(0);
});
