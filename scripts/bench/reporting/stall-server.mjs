// The server of the reporting benchmark's event-loop phase, in a process of its own (as
// `svc-server` runs), so that the stalls measured are the server's and not the benchmark's.
// Started with fork() and the server's config (JSON) as argument: sends {urls} once listening; on 'watch' it starts watching its event
// loop (a delay histogram, a timer listing the stalls, and the 'gc' entries), on 'report' it
// sends the figures and exits. Both time the gaps between the callbacks of a 1 ms timer: a stall
// of S ms reads as S to S + 1 ms (with the 5 ms timer used before, up to S + 5).
// Each stall also gets the time its thread ran and waited for a CPU (Linux schedstat): other
// processes on a busy machine stall the loop too, and that is not the server's work; the rest
// of a stall the thread was blocked (a lock, a synchronous system call).
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { startServer } from '../../../packages/server/dist/index.js';

const config = JSON.parse(process.argv[2]);
const unlimited = { concurrentRequests: 1000, costPerFiveMinutes: Number.MAX_SAFE_INTEGER, costPerHour: Number.MAX_SAFE_INTEGER };
// A query of the 10M-event dataset can outlast the 30 s idle cut-off on a busy machine.
const patient = { idleMs: 600_000, requestMs: 600_000 };
const server = await startServer({ ...config, host: '127.0.0.1', port: 0, logger: false, reportingLimits: unlimited, connectionLimits: patient });
const TICK_MS = 1;
/** A gap between ticks longer than this is listed as a stall. */
const STALL_MS = 20;
/** Linux's counters are read at most this often (three files a read, too many for each tick). */
const TIMES_MS = 5;
const delay = monitorEventLoopDelay({ resolution: TICK_MS });
const collections = [];
const gcObserver = new PerformanceObserver((list) => collections.push(...list.getEntries().map((e) => ({ start: e.startTime, end: e.startTime + e.duration }))));
const stalls = [];
let sampler;
let watchedSince = 0;
/**
 * The main thread's time running and runnable but not running, ms, and its major page faults;
 * the machine's CPU time stolen by the hypervisor, ms over all CPUs (0 where Linux's files are missing).
 */
const schedstat = `/proc/self/task/${process.pid}/schedstat`;
const taskStat = `/proc/self/task/${process.pid}/stat`;
const JIFFY_MS = 10;
const threadTimes = () => {
  try {
    const [ranNs, waitedNs] = readFileSync(schedstat, 'utf8').split(' ');
    // Fields after the command's closing parenthesis: state is field 3, majflt field 12.
    const majorFaults = Number(readFileSync(taskStat, 'utf8').split(') ')[1].split(' ')[9]);
    const stolenJiffies = Number(readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/)[8]);
    return { ranMs: Number(ranNs) / 1e6, waitMs: Number(waitedNs) / 1e6, majorFaults, stealMs: stolenJiffies * JIFFY_MS };
  } catch {
    return { ranMs: 0, waitMs: 0, majorFaults: 0, stealMs: 0 };
  }
};

process.on('message', async (message) => {
  if (message === 'watch') {
    gcObserver.observe({ entryTypes: ['gc'] });
    let tick = performance.now();
    watchedSince = tick;
    // A stall's running and waiting times are counted from the last read, up to TIMES_MS before it.
    let times = threadTimes();
    let timesRead = tick;
    sampler = setInterval(() => {
      const now = performance.now();
      const stalled = now - tick > STALL_MS;
      if (stalled || now - timesRead >= TIMES_MS) {
        const nowTimes = threadTimes();
        if (stalled) stalls.push({ start: tick, end: now, ranMs: nowTimes.ranMs - times.ranMs, waitMs: nowTimes.waitMs - times.waitMs, majorFaults: nowTimes.majorFaults - times.majorFaults, stealMs: nowTimes.stealMs - times.stealMs });
        times = nowTimes;
        timesRead = now;
      }
      tick = now;
    }, TICK_MS);
    delay.enable();
  } else if (message === 'report') {
    delay.disable();
    clearInterval(sampler);
    gcObserver.disconnect();
    const inGc = (stall) => collections.reduce((sum, gc) => sum + Math.max(0, Math.min(stall.end, gc.end) - Math.max(stall.start, gc.start)), 0);
    const described = (stall) => ({ atS: (stall.start - watchedSince) / 1000, ms: stall.end - stall.start, gcMs: inGc(stall), ranMs: stall.ranMs, waitMs: stall.waitMs, majorFaults: stall.majorFaults, stealMs: stall.stealMs });
    const longest = stalls.sort((a, b) => b.end - b.start - (a.end - a.start)).slice(0, 5).map(described);
    const own = (stall) => stall.end - stall.start - stall.waitMs;
    const longestOwn = stalls.sort((a, b) => own(b) - own(a)).slice(0, 5).map(described);
    const heapMb = process.memoryUsage().heapUsed / 2 ** 20;
    process.send({
      maxMs: delay.max / 1e6,
      p99Ms: delay.percentile(99) / 1e6,
      stalls: stalls.length,
      // The longest stall less its wait for a CPU: the server's own work, GC or blocking in one turn.
      ownMaxMs: Math.max(0, ...stalls.map((stall) => stall.end - stall.start - stall.waitMs)),
      longest,
      longestOwn,
      heapMb,
    });
    await server.close();
    process.exit(0);
  }
});
process.send({ urls: server.urls });
