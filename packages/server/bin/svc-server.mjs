#!/usr/bin/env -S node --max-semi-space-size=64
// A 64 MB young generation: the objects of the requests in flight die young instead of
// being promoted (measured with scripts/bench/ingest: about 10% less CPU per event).
import { main } from '../dist/cli.js';

main(process.argv.slice(2)).catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
