// The funnel thread's side (funnel-helper.ts): tallies the shares of users it is sent.
import { parentPort } from 'node:worker_threads';
import { type ColumnsShare, tallyShare } from './funnel.js';

parentPort!.on('message', ({ id, share }: { id: number; share: ColumnsShare }) => {
  try {
    const tally = tallyShare(share);
    const times = [tally.group.total, ...tally.group.byDay].flatMap((counts) => counts.transitionTimes.map((list) => list.buffer));
    parentPort!.postMessage({ id, tally }, times);
  } catch (error) {
    parentPort!.postMessage({ id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
});
