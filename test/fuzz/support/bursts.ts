// Bursts of 2 to 5 reporting requests (the documented limit of concurrent requests is 5) sent
// at once to one project, optionally right after a batch of events: every answer must be
// documented by the spec, none a 5xx. A failing burst shrinks to fewer, simpler requests.
import { operations } from '@svc/openapi-validation';
import fc from 'fast-check';
import { requestArbitrary } from './arbitraries.js';
import { expectDocumentedAnswer } from './check.js';
import type { RunningServer } from './engines.js';
import { seededEvents } from './seed.js';

const SENDS_PER_BURST = 3;

/** `wrap` runs each request's check (the long run counts failures through it). */
export function burstProperty(server: RunningServer, ingestFirst: fc.Arbitrary<boolean>, wrap = (check: () => Promise<void>) => check()) {
  const reporting = operations().filter((ref) => ref.bundle.name === 'reporting');
  const request = fc.oneof(...reporting.map((ref) => requestArbitrary(ref, server, server.url, { mutations: false })));
  let batch = 0;
  return fc.asyncProperty(fc.array(request, { minLength: 2, maxLength: 5 }), ingestFirst, async (requests, ingest) => {
    if (ingest) {
      const events = seededEvents(50, Date.now(), `burst-${batch++}`);
      const answer = await fetch(`${server.url}/2/httpapi`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: server.apiKey, events }) });
      if (answer.status !== 200) throw new Error(`ingesting before the burst: ${answer.status} ${await answer.text()}`);
    }
    // Sent again: the race a burst may meet does not come every time, and a shrunk burst must meet it too.
    for (let attempt = 0; attempt < SENDS_PER_BURST; attempt++) {
      const outcomes = await Promise.allSettled(requests.map((r) => wrap(() => expectDocumentedAnswer(server, r))));
      const failed = outcomes.find((outcome) => outcome.status === 'rejected');
      if (failed) throw failed.reason;
    }
  });
}
