#!/usr/bin/env -S node --max-semi-space-size=16
// A 16 MB young generation: with 64 MB each scavenge copied more survivors and held the event
// loop 20-30 ms while queries ran (scripts/bench/reporting: p99 delay 19-20 ms against 10-13 ms),
// for no CPU gain per ingested event (scripts/bench/ingest: 16.7-17.7 µs either way).
import { main } from '../dist/cli.js';

main(process.argv.slice(2)).catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
