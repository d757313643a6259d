// Loaded into the soaked server with --import: writes its JS heap and ArrayBuffer figures (the insert_id window and the identities live in
// ArrayBuffers) to the file
// SVC_SOAK_HEAP_FILE names every 2 s (the server exposes no heap figure). The timer is
// unref'd: it keeps no server alive.
import { writeFileSync } from 'node:fs';

const file = process.env.SVC_SOAK_HEAP_FILE;
if (file) {
  const write = () => {
    const { heapUsed, heapTotal, arrayBuffers } = process.memoryUsage();
    writeFileSync(file, JSON.stringify({ heapUsed, heapTotal, arrayBuffers }));
  };
  write();
  setInterval(write, 2_000).unref();
}
