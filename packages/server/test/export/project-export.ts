// A project's events as its Export API gives them, for the import tests: the lines of the
// hours around now (events are stored at the server's time) and their insert_ids.
import { expect } from 'vitest';
import type { Harness } from '../support/harness.js';
import { linesOf, readExportZip } from './zip-reader.js';

export const basic = (p: { api_key: string; secret_key: string }) => ({ authorization: `Basic ${Buffer.from(`${p.api_key}:${p.secret_key}`).toString('base64')}` });
/** An hour as the Export API takes it, `YYYYMMDDTHH` (UTC). */
export const hourText = (ms: number) => new Date(ms).toISOString().slice(0, 13).replace(/[-]/g, '');

/** The lines of the project's export of the last and next hour. */
export async function exportedLines(h: Harness, project: { api_key: string; secret_key: string }): Promise<string[]> {
  await h.server.store.flush();
  const response = await fetch(`${h.direct}/api/2/export?start=${hourText(Date.now() - 3_600_000)}&end=${hourText(Date.now() + 3_600_000)}`, { headers: basic(project) });
  if (response.status === 404) return [];
  expect(response.status).toBe(200);
  return (await readExportZip(Buffer.from(await response.arrayBuffer()))).flatMap(linesOf);
}

export const insertIds = (lines: string[]) => lines.map((line) => JSON.parse(line).$insert_id as string);
