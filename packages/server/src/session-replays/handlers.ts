// Handlers of session replays: the SDK's recording batches (ingest host), the listing of
// replays and of a replay's event files, and the files behind the signed links.
import type { components } from '../generated/session-replays.js';
import type { Caller, HandlerRequest, Reply } from '../http/operations.js';
import { invalidLink, type SignedLinks } from '../shared/signed-links.js';
import { eventFile, readBatch, type FileVersion } from './recording.js';
import { filePageToken, readFilePageToken, readReplayPageToken, replayPageToken, type SortOrder } from './page-tokens.js';
import type { ReplayKey, ReplayStore, StoredReplay } from './store.js';

type SessionReplay = components['schemas']['SessionReplay'];

export const RETENTION_DAYS = 90;
const LINK_VALID_SECONDS = 15 * 60;
/** The SDK's "capture disabled" directive: it stops sending such batches for the session. */
const SKIPPED_HEADER = 'x-session-replay-event-skipped';
const CAPTURE_DISABLED = '4005';

const appOf = (caller: Caller) => caller.project!.app_id;
const badRequest = (error: string) => ({ status: 400 as const, body: { code: 400, error } });
const iso = (ms: number) => new Date(ms).toISOString();
const replayId = (key: ReplayKey) => `${key.deviceId}/${key.sessionId}`;

const invalidReplayLink = invalidLink('list the files again for new links');

/** A file link whose parameters break the spec was not made by this server: 403 like any other invalid link. */
export const rejectReplayFileLink = () => invalidReplayLink;

export interface ReplayHandlerOptions {
  clock: () => number;
  /** Signs and checks the file links. */
  links: SignedLinks;
  /** The svc_ids of those of the devices in the project whose events are known. */
  svcIdsOfDevices: (appId: number, deviceIds: readonly string[]) => Promise<Map<string, number>>;
}

export class ReplayHandlers {
  constructor(
    private readonly replays: ReplayStore,
    private readonly options: ReplayHandlerOptions,
  ) {}

  private keptSince(now: number): number {
    return now - RETENTION_DAYS * 86_400_000;
  }

  private listed(replay: StoredReplay, svcIds: Map<string, number>): SessionReplay {
    return {
      replay_id: replayId(replay),
      session_id: replay.sessionId,
      device_id: replay.deviceId,
      svc_id: svcIds.get(replay.deviceId) ?? null,
      start_time: iso(replay.startMs),
      end_time: iso(replay.endMs),
      retention_in_days: RETENTION_DAYS,
    };
  }

  createSessionReplayEvents = async (request: HandlerRequest<'createSessionReplayEvents'>): Promise<Reply<'createSessionReplayEvents'>> => {
    const { device_id: deviceId, session_id: sessionId, type } = request.query as { device_id: string; session_id: string; type?: string };
    const ack = (eventsIngested: number) => ({ code: 200 as const, events_ingested: eventsIngested, server_upload_time: request.receivedAt });
    if (type === 'interaction') {
      return { status: 200, body: ack(0), headers: { [SKIPPED_HEADER]: CAPTURE_DISABLED, 'access-control-expose-headers': SKIPPED_HEADER } };
    }
    const batch = readBatch(request.body.events);
    if ('problem' in batch) return badRequest(batch.problem);
    await this.replays.addFile(appOf(request.caller), { deviceId, sessionId, startMs: batch.startMs, endMs: batch.endMs }, batch.events);
    return { status: 200, body: ack(batch.count) };
  };

  listSessionReplays = async (request: HandlerRequest<'listSessionReplays'>): Promise<Reply<'listSessionReplays'>> => {
    const appId = appOf(request.caller);
    const { start_time: startTime, end_time: endTime, page_token: pageToken } = request.query;
    const order: SortOrder = request.query.sort_order ?? 'asc';
    const pageSize = request.query.page_size ?? 50;
    const fromMs = startTime === undefined ? undefined : Date.parse(startTime);
    const toMs = endTime === undefined ? undefined : Date.parse(endTime);
    if (fromMs !== undefined && toMs !== undefined && toMs < fromMs) return badRequest(`end_time ${endTime} is before start_time ${startTime}`);
    const token = pageToken === undefined ? undefined : readReplayPageToken(pageToken);
    if (pageToken !== undefined && !token) return badRequest('page_token is not valid: pass next_page_token of the previous page unchanged');
    if (token && token.order !== order) return badRequest(`page_token was issued for sort_order ${token.order}; use the same sort_order on every page`);
    const filter = { fromMs, toMs, keptSinceMs: this.keptSince(request.receivedAt) };
    const found = await this.replays.replays(appId, filter, order === 'desc', token?.after, pageSize + 1);
    const page = found.slice(0, pageSize);
    const last = page.at(-1);
    const svcIds = await this.options.svcIdsOfDevices(
      appId,
      page.map((replay) => replay.deviceId),
    );
    return {
      status: 200,
      body: {
        session_replays: page.map((replay) => this.listed(replay, svcIds)),
        next_page_token: found.length > pageSize && last ? replayPageToken(order, last) : null,
      },
    };
  };

  listSessionReplayFiles = async (request: HandlerRequest<'listSessionReplayFiles'>): Promise<Reply<'listSessionReplayFiles'>> => {
    const appId = appOf(request.caller);
    const { replay_id: id, page_token: pageToken } = request.query as { replay_id: string; page_token?: string };
    const version = (request.query.version ?? 3) as FileVersion;
    const pageSize = request.query.page_size ?? 100;
    const slash = id.lastIndexOf('/');
    const key = { deviceId: id.slice(0, slash), sessionId: id.slice(slash + 1) };
    const after = pageToken === undefined ? undefined : readFilePageToken(pageToken, id);
    if (pageToken !== undefined && !after) return badRequest(`page_token is not valid for replay_id ${id}: pass next_page_token of the previous page unchanged`);
    const keptSinceMs = this.keptSince(request.receivedAt);
    const found = await this.replays.files(appId, key, keptSinceMs, after, pageSize + 1);
    if (found.length === 0 && !after) return { status: 404, body: { code: 404, error: `No session replay data for replay_id ${id}` } };
    const page = found.slice(0, pageSize);
    const last = page.at(-1);
    const files = page.map((file) => {
      const link = new URL(`/api/1/session-replays/downloads/${file.id}`, request.origin);
      link.search = new URLSearchParams([['version', String(version)], ...this.options.links.sign(`${file.id}/${version}`, LINK_VALID_SECONDS)]).toString();
      return link.href;
    });
    return { status: 200, body: { files, next_page_token: found.length > pageSize && last ? filePageToken(id, last) : null } };
  };

  getSessionReplayFileDownload = async (request: HandlerRequest<'getSessionReplayFileDownload'>): Promise<Reply<'getSessionReplayFileDownload'>> => {
    const { file_id: fileId } = request.path;
    const { version, expires, signature } = request.query as { version: FileVersion; expires: number; signature: string };
    if (!this.options.links.verify(`${fileId}/${version}`, expires, signature)) return invalidReplayLink;
    const events = await this.replays.fileEvents(fileId, this.keptSince(this.options.clock()));
    if (events === undefined) return { status: 404, body: { code: 404, error: `No session replay file ${fileId}` } };
    // The file is served as an object store serves a .json.gz object: gzip bytes, no Content-Encoding.
    return { status: 200, body: eventFile(events, version) as unknown as string, headers: { 'content-type': 'application/gzip' } };
  };
}
