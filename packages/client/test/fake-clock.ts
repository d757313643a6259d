import type { Clock } from '../src/index.js';

/**
 * A virtual clock: `sleep` queues a timer and time jumps to the earliest timer once the
 * pending promise callbacks have run (a macrotask later), so waits of seconds take no real time.
 */
export function fakeClock(start = 0) {
  let now = start;
  let order = 0;
  let pumping = false;
  const timers: { at: number; order: number; wake: () => void }[] = [];
  const sleeps: number[] = [];

  const pump = () => {
    pumping = false;
    timers.sort((a, b) => a.at - b.at || a.order - b.order);
    const timer = timers.shift();
    if (!timer) return;
    now = Math.max(now, timer.at);
    timer.wake();
    if (timers.length > 0) schedule();
  };
  const schedule = () => {
    if (pumping) return;
    pumping = true;
    setImmediate(pump);
  };

  const clock: Clock = {
    now: () => now,
    sleep(ms, signal) {
      sleeps.push(ms);
      return new Promise((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        const timer = { at: now + ms, order: order++, wake: () => resolve() };
        signal?.addEventListener(
          'abort',
          () => {
            timers.splice(timers.indexOf(timer), 1);
            reject(signal.reason);
          },
          { once: true },
        );
        timers.push(timer);
        schedule();
      });
    },
  };
  return { clock, sleeps, now: () => now };
}
