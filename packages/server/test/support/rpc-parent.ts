// A parent of support/rpc-child.ts for the RPC tests: starts it and prints its pid once it
// answers; then `idle` leaves it running with nothing else to do, `stay` lives on until killed,
// `terminate` ends it and prints `terminated`.
import { remote, startProcess } from '../../src/store/worker/rpc.js';

const child = await startProcess({ entry: new URL('./rpc-child.ts', import.meta.url), data: undefined, nice: 0 }, () => undefined);
const target = remote<{ pid(): Promise<number> }>(child.client, 'target', { pid: 'call' });
process.stdout.write(`${await target.pid()}\n`);
const mode = process.argv[2];
if (mode === 'stay') setInterval(() => undefined, 1000);
if (mode === 'terminate') {
  await child.terminate();
  process.stdout.write('terminated\n');
}
