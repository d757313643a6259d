// CPU time of processes, read from /proc (Linux; clock ticks of 10 ms).
import { readFileSync } from 'node:fs';

/** User and system CPU time (ms) of a process. */
export function cpuMillis(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** User and system CPU time (ms) of a process and its descendants (0 for those gone meanwhile). */
export function treeCpuMillis(pid) {
  let total = 0;
  try {
    total += cpuMillis(pid);
    for (const tid of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)) total += treeCpuMillis(Number(tid));
  } catch {
    // Gone meanwhile.
  }
  return total;
}
