// The server of the reporting benchmark's event-loop phase, in a process of its own (as
// `svc-server` runs), so that the stalls measured are the server's and not the benchmark's.
// Started with fork() and the server's config (JSON) as argument: sends {urls} once listening; on 'watch' it starts watching its event
// loop (a 5 ms timer and the 'gc' entries), on 'report' it sends the figures and exits.
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { startServer } from '../../../packages/server/dist/index.js';

const config = JSON.parse(process.argv[2]);
const unlimited = { concurrentRequests: 1000, costPerFiveMinutes: Number.MAX_SAFE_INTEGER, costPerHour: Number.MAX_SAFE_INTEGER };
const server = await startServer({ ...config, host: '127.0.0.1', port: 0, logger: false, reportingLimits: unlimited });
const delay = monitorEventLoopDelay({ resolution: 5 });
const collections = [];
const gcObserver = new PerformanceObserver((list) => collections.push(...list.getEntries().map((e) => ({ start: e.startTime, end: e.startTime + e.duration }))));
const stalls = [];
let sampler;

process.on('message', async (message) => {
  if (message === 'watch') {
    gcObserver.observe({ entryTypes: ['gc'] });
    let tick = performance.now();
    sampler = setInterval(() => {
      const now = performance.now();
      if (now - tick > 25) stalls.push({ start: tick, end: now });
      tick = now;
    }, 5);
    delay.enable();
  } else if (message === 'report') {
    delay.disable();
    clearInterval(sampler);
    gcObserver.disconnect();
    const inGc = (stall) => collections.reduce((sum, gc) => sum + Math.max(0, Math.min(stall.end, gc.end) - Math.max(stall.start, gc.start)), 0);
    const longest = stalls.sort((a, b) => b.end - b.start - (a.end - a.start)).slice(0, 5);
    const heapMb = process.memoryUsage().heapUsed / 2 ** 20;
    process.send({
      maxMs: delay.max / 1e6,
      p99Ms: delay.percentile(99) / 1e6,
      stalls: stalls.length,
      longest: longest.map((stall) => ({ ms: stall.end - stall.start - 5, gcMs: inGc(stall) })),
      heapMb,
    });
    await server.close();
    process.exit(0);
  }
});
process.send({ urls: server.urls });
