// How the suites run their properties: seeded (FUZZ_SEED, or a new seed printed at the start),
// replayable (FUZZ_SEED and FUZZ_PATH from a failure's message rerun its shrunk
// counterexample), bounded in time (a property stops after FUZZ_PROPERTY_SECONDS, shrinking
// included, and reports the smallest failing request found by then).
import fc from 'fast-check';
import { AnswerFailure } from './check.js';

export const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const PATH = process.env.FUZZ_PATH;
const PROPERTY_SECONDS = Number(process.env.FUZZ_PROPERTY_SECONDS ?? 20);

export function parameters<T>(numRuns: number, seed = SEED): fc.Parameters<T> {
  return { seed, path: PATH, numRuns, plugins: [fc.interruptAfterTimeLimit(PROPERTY_SECONDS * 1000)] };
}

/** Runs the property; a failure throws with the shrunk counterexample (curl lines), the answer, and how to replay it. */
export async function assertProperty<T>(property: fc.IAsyncProperty<T>, numRuns: number, replay: string, seed = SEED): Promise<void> {
  const details = await fc.check(property, parameters<T>(numRuns, seed));
  if (!details.failed) return;
  const kind = details.errorInstance instanceof AnswerFailure ? `${details.errorInstance.kind}\n` : '';
  throw new Error(`${kind}${fc.defaultReportMessage(details)}\nreplay: FUZZ_SEED=${details.seed} FUZZ_PATH=${details.counterexamplePath} ${replay}`);
}
