#!/usr/bin/env -S node --max-semi-space-size=16 --v8-pool-size=1
// A 16 MB young generation: with 64 MB each scavenge copied more survivors and held the event
// loop 20-30 ms while queries ran (scripts/bench/reporting: p99 delay 19-20 ms against 10-13 ms),
// for no CPU gain per ingested event (scripts/bench/ingest: 16.7-17.7 µs either way).
// One V8 helper thread (GC, compiling) besides the main one: on 2 cores, four helpers of a
// collection took the CPUs from the main thread waiting for them (the benchmark's stalls: max
// 23-34 ms, 0-4 over 20 ms; with one, 18-24 ms and none), for the same ingestion (32k events/s).
import { main } from '../dist/cli.js';

main(process.argv.slice(2)).catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
