// A recording's event files, listed (`GET /api/1/session-replays/files`) page by page and
// fetched through their signed links (no credentials: the link is the permission).
import type { eventWithTime } from 'rrweb';
import { gunzipText } from '../gzip.js';
import type { Client } from '../session.js';

/** Every event of `replayId`, in file order. */
export async function recordedEvents(client: Client, replayId: string): Promise<eventWithTime[]> {
  const events: eventWithTime[] = [];
  let pageToken: string | undefined;
  do {
    const { data } = await client.GET('/api/1/session-replays/files', { params: { query: { replay_id: replayId, version: 3, ...(pageToken ? { page_token: pageToken } : {}) } } });
    // The links expire 15 minutes after their page: fetched before the next page is asked for.
    const files = await Promise.all(
      data.files.map(async (link) => {
        const file = await fetch(link, { credentials: 'omit' });
        if (!file.ok) throw new Error(`A recording file could not be fetched (HTTP ${file.status}).`);
        return JSON.parse(await gunzipText(new Uint8Array(await file.arrayBuffer()))) as eventWithTime[];
      }),
    );
    events.push(...files.flat());
    pageToken = data.next_page_token ?? undefined;
  } while (pageToken);
  return events;
}
