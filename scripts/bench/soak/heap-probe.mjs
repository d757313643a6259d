// Loaded into the soaked server with --import (and so into its engine process, which inherits
// the flag): each process writes its JS heap and ArrayBuffer figures to SVC_SOAK_HEAP_FILE.<pid>
// every 2 s (the server exposes none). In the engine process the ArrayBuffers are mostly the
// per-user timelines, an in-memory index of every stored event. The timer is unref'd: it keeps
// no process alive.
import { writeFileSync } from 'node:fs';

const file = process.env.SVC_SOAK_HEAP_FILE;
if (file) {
  const write = () => {
    const { heapUsed, heapTotal, arrayBuffers } = process.memoryUsage();
    writeFileSync(`${file}.${process.pid}`, JSON.stringify({ heapUsed, heapTotal, arrayBuffers }));
  };
  write();
  setInterval(write, 2_000).unref();
}
