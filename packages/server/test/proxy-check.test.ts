// The Prism proxy of the harness is a real check: an answer that breaks the spec reaches
// the test as a failure.
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prepareDocuments } from '@svc/mock';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startProxy } from './support/harness.js';
import { postJson } from './support/http.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-proxy-check-'));
const wrong = http.createServer((_request, response) => {
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end(JSON.stringify({ code: 200 })); // lacks events_ingested, payload_size_bytes, server_upload_time
});
let proxy: Awaited<ReturnType<typeof startProxy>> | undefined;

beforeAll(async () => {
  await new Promise<void>((resolve) => wrong.listen(0, '127.0.0.1', resolve));
  const documents = prepareDocuments({ outDir: dir });
  proxy = await startProxy(documents.ingest!.file, `http://127.0.0.1:${(wrong.address() as AddressInfo).port}`);
});
afterAll(() => {
  proxy?.child.kill('SIGTERM');
  wrong.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a response that breaks the spec fails the request in the test', async () => {
  await expect(postJson(`${proxy!.url}/batch`, { api_key: 'k', events: [{ event_type: 'x', user_id: 'user-1' }] })).rejects.toThrow(/spec violations.*events_ingested/);
});
