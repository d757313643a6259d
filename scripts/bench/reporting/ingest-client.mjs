// The ingestion client of the reporting benchmark's stall phase, in a process of its own that
// run.mjs starts under `chrt --idle` (or `nice`, --clients-nice): every thread of it (its GC's
// too) yields the CPUs to the server it measures, as a client on another machine would. Sends batches of 500 events to
// `${url}/batch` until told 'stop', then sends {batches, accepted} and exits.
const { url, apiKey, run } = JSON.parse(process.argv[2]);
let ingesting = true;
process.once('message', () => (ingesting = false));
let batches = 0;
let accepted = 0;
for (; ingesting; batches++) {
  const events = Array.from({ length: 500 }, (_, i) => ({ event_type: 'Live', user_id: `live-${i}`, insert_id: `${run}-${batches}-${i}` }));
  const answer = await fetch(`${url}/batch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: apiKey, events }) });
  if (answer.ok) accepted++;
  await answer.arrayBuffer();
}
process.send({ batches, accepted }, () => process.exit(0));
