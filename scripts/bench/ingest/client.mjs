// The sending side (its own process): posts every body to the server with `concurrency`
// requests in flight over keep-alive, then times JSON.parse alone on the same bodies.
// Prints one JSON line: { upload: {...}, parse: {...} }.
import { Agent, request } from 'node:http';
import { makeBodies } from './events.mjs';

const [url, apiKey, run, batches, concurrency] = process.argv.slice(2);
const bodies = makeBodies(apiKey, run, Number(batches));
const eventsPerBody = 2000;
const agent = new Agent({ keepAlive: true, maxSockets: Number(concurrency) });

function post(body) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(`${url}/batch`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - started) : reject(new Error(`status ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
function summary(latencies, seconds) {
  const sorted = [...latencies].sort((a, b) => a - b);
  return { eventsPerSecond: Math.round((latencies.length * eventsPerBody) / seconds), p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

const latencies = [];
let next = 0;
const started = performance.now();
await Promise.all(
  Array.from({ length: Number(concurrency) }, async () => {
    while (next < bodies.length) latencies.push(await post(bodies[next++]));
  }),
);
const upload = summary(latencies, (performance.now() - started) / 1000);
agent.destroy();

const parseLatencies = [];
const parseStarted = performance.now();
for (const body of bodies) {
  const t = performance.now();
  JSON.parse(body);
  parseLatencies.push(performance.now() - t);
}
const parse = summary(parseLatencies, (performance.now() - parseStarted) / 1000);
console.log(JSON.stringify({ upload, parse }));
