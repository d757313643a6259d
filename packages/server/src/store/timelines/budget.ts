// How much memory timelines hold, so that the engine keeps them within a budget
// (`--timeline-memory`): they are an index of every stored event in memory, which grows with
// the data; a project whose timelines would pass the budget is answered by SQL instead.
import type { ProjectTimelines, Timeline } from './timelines.js';

/** A user's arrays are their own, or views of a build's slab (counted once per slab). */
function addArrays(arrays: readonly ArrayBufferView[], slabs: Set<ArrayBufferLike>): number {
  let bytes = 0;
  for (const array of arrays) {
    if (array.byteLength === array.buffer.byteLength) bytes += array.byteLength;
    else slabs.add(array.buffer);
  }
  return bytes;
}

const arraysOf = ({ times, types, seqs, runs }: Timeline): ArrayBufferView[] => (runs ? [times, types, seqs, runs.types, runs.ends, runs.times, runs.positions] : [times, types, seqs]);

/** Bytes of a project's typed arrays: its users' timelines (capacity included), their runs by type and its build's columns. */
export function timelineBytes(project: ProjectTimelines): number {
  const slabs = new Set<ArrayBufferLike>();
  let bytes = 0;
  for (const timeline of project.users.values()) bytes += addArrays(arraysOf(timeline), slabs);
  for (const column of project.columns?.byType ?? []) if (column) bytes += column.users.byteLength + column.starts.byteLength + column.times.byteLength + column.positions.byteLength;
  for (const slab of slabs) bytes += slab.byteLength;
  return bytes;
}
