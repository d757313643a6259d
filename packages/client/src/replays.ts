/// <reference types="node" />
// Node-only module (node:zlib): the package build otherwise compiles without Node types.
import { gunzipSync, inflateSync } from 'node:zlib';
import { intOption } from './batching.js';
import { lenient, type AppClient } from './clients.js';
import type { SessionReplaysComponents, SessionReplaysPaths } from './generated/roles.js';
import { responseError } from './errors.js';
import { signalInit, tokenListing, tokenPages, type ListOptions, type Listing } from './paging.js';

type Schemas = SessionReplaysComponents['schemas'];
type ListQuery = NonNullable<SessionReplaysPaths['/api/1/session-replays']['get']['parameters']['query']>;
type FilesQuery = SessionReplaysPaths['/api/1/session-replays/files']['get']['parameters']['query'];

export type SessionReplay = Schemas['SessionReplay'];
/** One recorded-session event, as a session-replay player consumes it (an item of a version 3 file). */
export type RecordedEvent = Schemas['ReplayFileV3'][number];
/** Event file format: 3 (events as JSON) or 2 (each event zlib-compressed on its own). */
export type ReplayFileVersion = NonNullable<FilesQuery['version']>;
/** Filters and order of a replay listing; the iterator follows the pages itself. */
export type ListReplaysParams = Omit<ListQuery, 'page_token'>;

export type ListReplaysOptions = ListOptions;

/** Files downloaded at once unless `concurrency` says otherwise. */
const DEFAULT_FILE_DOWNLOADS_IN_FLIGHT = 4;

/**
 * Every session replay of the listing, page after page: `next_page_token` is passed unchanged
 * as `page_token` with the same filters and `sort_order` on every page (the service refuses a
 * token used with another `sort_order`). An answer other than 200 throws a `ResponseError`.
 */
export function listReplays(client: AppClient, params: ListReplaysParams = {}, options: ListReplaysOptions = {}): Listing<SessionReplay> {
  const get = (pageToken: string | undefined) =>
    lenient(client).GET('/api/1/session-replays', {
      params: { query: { ...params, ...(pageToken === undefined ? {} : { page_token: pageToken }) } },
      ...signalInit(options),
    });
  return tokenListing('listing session replays', get, (page) => page.session_replays);
}

export interface ListReplayFilesOptions extends ListOptions {
  /** File format to ask for; default 3. */
  version?: ReplayFileVersion;
  /** File links per listed page (1 to 1000); default: the service's (100). */
  pageSize?: FilesQuery['page_size'];
}

/** What a failed file listing of `replayId` names. */
const listingFiles = (replayId: string) => `listing the files of session replay ${replayId}`;

/** The request for one page of the file listing of `replayId`. */
function replayFilePage(client: AppClient, replayId: string, options: ListReplayFilesOptions) {
  return (pageToken: string | undefined) =>
    lenient(client).GET('/api/1/session-replays/files', {
      params: {
        query: {
          replay_id: replayId,
          version: options.version ?? 3,
          ...(options.pageSize === undefined ? {} : { page_size: options.pageSize }),
          ...(pageToken === undefined ? {} : { page_token: pageToken }),
        },
      },
      ...signalInit(options),
    });
}

/**
 * The pre-signed links of every event file of `replayId`, in file order, page after page. A
 * page's links expire 15 minutes after it is listed: fetch them as they come (the next page is
 * asked for only when this one's links are consumed), without credentials.
 */
export function listReplayFiles(client: AppClient, replayId: string, options: ListReplayFilesOptions = {}): Listing<string> {
  return tokenListing(listingFiles(replayId), replayFilePage(client, replayId, options), (page) => page.files);
}

export interface DownloadReplayOptions {
  /** File format to ask for and decode; default 3. */
  version?: ReplayFileVersion;
  /** File links per listed page (1 to 1000); default: the service's (100). */
  pageSize?: FilesQuery['page_size'];
  /**
   * Fetch for the pre-signed file links (default `globalThis.fetch`). The links carry their own
   * signature: no credentials are sent to them.
   */
  fetch?: typeof fetch;
  /** Files downloaded at once; default 4. */
  concurrency?: number;
  signal?: AbortSignal;
}

/**
 * The whole recorded session of `replayId` (`device_id/session_id`) as one event array: lists
 * the replay's files page by page, downloads the files of each page before asking for the next
 * (the links expire 15 minutes after their page), decodes each file (see `decodeReplayFile`)
 * and concatenates the events in file order. Throws a `ResponseError` when the listing or a
 * download is answered with another status than 2xx (404: no data for `replayId`).
 */
export async function downloadReplay(client: AppClient, replayId: string, options: DownloadReplayOptions = {}): Promise<RecordedEvent[]> {
  const version = options.version ?? 3;
  if (version !== 2 && version !== 3) throw new RangeError(`version must be 2 or 3, got ${String(version)}`);
  const concurrency = intOption(options.concurrency, DEFAULT_FILE_DOWNLOADS_IN_FLIGHT, 'concurrency', 1);
  const fetchFile = options.fetch ?? globalThis.fetch;
  const { signal } = options;

  const events: RecordedEvent[] = [];
  let fileCount = 0;
  const pages = tokenPages(listingFiles(replayId), replayFilePage(client, replayId, { ...options, version }));
  // The next page is asked for once this one's files are downloaded: the links expire.
  for await (const { data } of pages) {
    const first = fileCount;
    const decoded = await mapInOrder(data.files, concurrency, async (link, i) => {
      const file = await fetchFile(link, signal ? { signal } : {});
      const what = `downloading event file ${first + i} of session replay ${replayId}`;
      if (!file.ok) throw responseError(what, file.status, await file.text(), file.headers);
      return decodeReplayFile(new Uint8Array(await file.arrayBuffer()), version, what);
    });
    fileCount += data.files.length;
    for (const fileEvents of decoded) for (const event of fileEvents) events.push(event);
  }
  return events;
}

const isGzip = (bytes: Uint8Array) => bytes[0] === 0x1f && bytes[1] === 0x8b;

/**
 * The events of one replay event file. The file is gzip-compressed JSON; when the storage
 * served it with `Content-Encoding: gzip`, fetch has already inflated it, so bytes without the
 * gzip magic number are read as the JSON itself. Version 3: the JSON array holds the events.
 * Version 2: it holds one packed string per event, the latin1 text of the zlib-compressed JSON
 * of the event: latin1 → bytes → inflate → JSON.
 */
export function decodeReplayFile(bytes: Uint8Array, version: ReplayFileVersion, what = 'decoding a replay event file'): RecordedEvent[] {
  const content: unknown = JSON.parse((isGzip(bytes) ? gunzipSync(bytes) : Buffer.from(bytes)).toString('utf8'));
  if (!Array.isArray(content)) throw new TypeError(`${what}: the file is not a JSON array`);
  if (version === 3) return content as RecordedEvent[];
  return content.map((packed, index) => unpackEvent(packed, `${what}, event ${index}`));
}

function unpackEvent(packed: unknown, what: string): RecordedEvent {
  if (typeof packed !== 'string') throw new TypeError(`${what}: a version 2 event is a string, got ${typeof packed}`);
  // The upstream wording ("each string is a JSON string whose value is a latin1-encoded blob")
  // also reads as one more JSON encoding of the string: a zlib stream never starts with '"'.
  const latin1 = packed.startsWith('"') ? (JSON.parse(packed) as unknown) : packed;
  if (typeof latin1 !== 'string') throw new TypeError(`${what}: the packed event is not a string`);
  return JSON.parse(inflateSync(Buffer.from(latin1, 'latin1')).toString('utf8')) as RecordedEvent;
}

/** `fn` over `items` with at most `concurrency` calls in flight; results in input order. Stops taking items after a failure. */
async function mapInOrder<T, R>(items: readonly T[], concurrency: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      const index = next++;
      try {
        results[index] = await fn(items[index]!, index);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}
