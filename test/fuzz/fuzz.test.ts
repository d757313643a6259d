// Spec-driven fuzzing of the running server: for every operation of every bundle, requests
// generated from the schemas (valid ones, then ones broken on purpose), each answer held to
// the spec by @svc/openapi-validation; never a 5xx.
// FUZZ_SEED replays a run (printed at the start and with every failure); FUZZ_RUNS sets the
// requests per operation and kind.
import { operations, validateRequest, validateResponse } from '@svc/openapi-validation';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type FuzzRequest, invalidRequest, validRequest } from './support/requests.js';
import { type RunningServer, startServer } from './support/server.js';

const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 1e9));
const RUNS = Number(process.env.FUZZ_RUNS ?? 10);

let server: RunningServer;
beforeAll(async () => {
  server = await startServer();
  console.log(`fuzzing with FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS} against ${server.url}`);
});
afterAll(() => server?.stop());

interface Outcome {
  operation: string;
  request: FuzzRequest;
  seed: number;
  status: number;
}

const failures: string[] = [];
const outcomes: Outcome[] = [];

function replay(request: FuzzRequest, seed: number): string {
  const headers = Object.entries(request.headers).map(([k, v]) => ` -H '${k}: ${v.slice(0, 200)}'`).join('');
  const body = request.body === undefined ? '' : ` --data-binary '${request.body.slice(0, 500).replace(/'/g, "'\\''")}'`;
  return `seed ${seed} (FUZZ_SEED=${SEED}): curl -X ${request.method} '${server.url}${request.url.slice(0, 500)}'${headers}${body}`;
}

async function send(operation: string, request: FuzzRequest, seed: number): Promise<void> {
  const response = await fetch(`${server.url}${request.url}`, { method: request.method, headers: request.headers, body: request.body });
  const text = await response.text();
  outcomes.push({ operation, request, seed, status: response.status });
  const fail = (why: string) => void failures.push(`${operation} [${request.mutation ?? 'valid'}] ${response.status} ${why}\n  ${replay(request, seed)}\n  answer: ${text.slice(0, 300)}`);
  if (response.status >= 500) return fail('a server error');
  // Answers of a path the spec serves, with a method it does not, or a path it does not match.
  if (response.status === 404 && /^No operation at/.test(JSON.parse(text || '{}').error ?? '')) return;
  // HTTP-level answers outside every operation (README): request line and headers over 16 KB.
  if (response.status === 431 && request.mutation === 'oversized strings') return;
  const json = (response.headers.get('content-type') ?? '').includes('json');
  const body: unknown = json && text ? JSON.parse(text) : text || undefined;
  const path = new URL(request.url, 'http://fuzz.invalid').pathname;
  let problems: string[];
  try {
    problems = validateResponse(request.method, path, response.status, json ? body : undefined);
  } catch {
    // The path matched no operation (garbage path parameters): only 404/405 are right.
    if (response.status !== 404 && response.status !== 405) fail('an answer on a path no operation has');
    return;
  }
  if (!json && response.status < 300) problems = problems.filter((p) => !p.includes('documents no JSON body'));
  if (problems.length > 0) fail(`breaks the spec: ${problems.join('; ')}`);
}

test('every operation of every bundle answers generated requests as its spec documents', async () => {
  const started = performance.now();
  const refs = operations();
  const timings: [string, number][] = [];
  for (const [index, ref] of refs.entries()) {
    const operation = ref.op.operationId as string;
    const opStarted = performance.now();
    for (let run = 0; run < RUNS; run++) {
      const seed = SEED + index * 10_000 + run;
      await send(operation, validRequest(ref, server, seed), seed);
      await send(operation, invalidRequest(ref, server, seed + 5_000), seed + 5_000);
    }
    timings.push([operation, performance.now() - opStarted]);
  }
  if (process.env.FUZZ_STATUSES) {
    const byOperation = new Map<string, number[]>();
    for (const o of outcomes.filter((x) => x.request.mutation === undefined)) byOperation.set(o.operation, [...(byOperation.get(o.operation) ?? []), o.status]);
    console.log([...byOperation].map(([op, statuses]) => `${op}: ${statuses.join(' ')}`).join('\n'));
  }
  if (process.env.FUZZ_TIMINGS) console.log(timings.sort((a, b) => b[1] - a[1]).slice(0, 10).map(([op, ms]) => `${op} ${ms.toFixed(0)} ms`).join('\n'));
  const seconds = (performance.now() - started) / 1000;
  const valid = outcomes.filter((o) => o.request.mutation === undefined);
  // The generator must produce requests the spec accepts, and the server must serve them:
  // otherwise the suite would only ever exercise the 400 path.
  const acceptedBySpec = valid.filter(
    (o) => validateRequest({ method: o.request.method, url: o.request.url, headers: o.request.headers, body: o.request.body }).valid,
  );
  const served = acceptedBySpec.filter((o) => o.status >= 200 && o.status < 300);
  console.log(
    `${outcomes.length} requests in ${seconds.toFixed(1)} s over ${refs.length} operations; of the generated valid requests, ${acceptedBySpec.length} pass the spec's request validation and ${served.length} of those were answered with 2xx`,
  );
  expect(failures, failures.join('\n\n')).toEqual([]);
  expect(acceptedBySpec.length / valid.length).toBeGreaterThan(0.5);
  // Requests on generated names that no entity has get the documented 409/400 refusals (taxonomy,
  // annotations: about half of the served operations), so a quarter answered 2xx is the floor.
  expect(served.length / acceptedBySpec.length).toBeGreaterThan(0.25);
  const batches = acceptedBySpec.filter((o) => o.operation === 'createBatchEvents');
  expect(batches.filter((o) => o.status === 200).length).toBeGreaterThan(0);
});

test('afterwards the server is alive and a normal batch is acknowledged', async () => {
  expect(server.child.exitCode).toBeNull();
  const answer = await fetch(`${server.url}/batch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: server.apiKey, events: [{ event_type: 'After fuzzing', user_id: 'user-after-fuzz' }] }),
  });
  expect(answer.status).toBe(200);
});

