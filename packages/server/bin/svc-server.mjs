#!/usr/bin/env -S node --max-semi-space-size=16 --single-threaded-gc
// A 16 MB young generation: with 64 MB each scavenge copied more survivors and held the event
// loop 20-30 ms while queries ran (scripts/bench/reporting: p99 delay 19-20 ms against 10-13 ms),
// for no CPU gain per ingested event (scripts/bench/ingest: 16.7-17.7 µs either way).
// The GC on the main thread alone: with V8's helper threads, a collection waited for them
// while they waited for a CPU (the loop blocked 45-86 ms in GCs of 30 MB heaps on 2 cores);
// alone, no GC was among the stalls over 20 ms, which went from 18-24 to 9-10 per bench run.
// The engine's process keeps the helpers (store/worker/rpc.ts).
import { main } from '../dist/cli.js';

main(process.argv.slice(2)).catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
