// `svc-server import`: the events of export archives sent to a server's batch API. Lines are
// read an hour entry at a time, converted (upload-event.ts) and sent in batches, a few at a
// time; an hour is complete once every batch holding its events is acknowledged, and the state
// file (state.ts) records it, so that an interrupted run resumes at the first hour not complete.
import { type ArchiveFile, archiveFiles, archiveHours, listHours } from './archives.js';
import { Sender, type SenderOptions } from './sender.js';
import { ImportState, targetOf } from './state.js';
import { convertLine, type GroupIdentification, type UploadEvent } from './upload-event.js';

export interface ImportOptions extends SenderOptions {
  /** An export zip, or a folder of them. */
  source: string;
  /** Default: the source's path followed by `.import-state.json`. */
  statePath?: string;
  /** Events a request (at most the batch API's 2000). */
  batchSize?: number;
  /** Requests in flight at once. */
  concurrency?: number;
  /** Stops the run between batches; what was acknowledged stays recorded. */
  signal?: AbortSignal;
  onProgress?: (progress: ImportProgress) => void;
  onWarning?: (message: string) => void;
}

export interface ImportProgress {
  /** Lines read. */
  lines: number;
  sent: number;
  accepted: number;
  skipped: Map<string, number>;
  hoursDone: number;
  hoursTotal: number;
  /** Gzip bytes read of those to read (for the ETA). */
  bytesRead: number;
  bytesTotal: number;
  batches: number;
  startedAt: number;
}

export interface ImportSummary extends ImportProgress {
  seconds: number;
  interrupted: boolean;
  /** Files or hours that could not be read. */
  problems: string[];
  statePath: string;
}

export const MAX_BATCH_SIZE = 2000;
const GROUPS_PER_REQUEST = 1000;
const STATE_SAVE_INTERVAL_MS = 1000;

interface Hour {
  file: ArchiveFile;
  name: string;
  /** Batches holding events of the hour not yet acknowledged (the one being filled included). */
  pending: number;
  allRead: boolean;
}

interface Batch {
  events: UploadEvent[];
  groups: GroupIdentification[];
  hours: Hour[];
}

const add = (counts: Map<string, number>, reason: string, count = 1) => counts.set(reason, (counts.get(reason) ?? 0) + count);
const newBatch = (): Batch => ({ events: [], groups: [], hours: [] });

export async function runImport(options: ImportOptions): Promise<ImportSummary> {
  const batchSize = Math.min(options.batchSize ?? MAX_BATCH_SIZE, MAX_BATCH_SIZE);
  const concurrency = options.concurrency ?? 4;
  const warn = options.onWarning ?? (() => undefined);
  const statePath = options.statePath ?? `${options.source.replace(/\/+$/, '')}.import-state.json`;
  const files = archiveFiles(options.source);
  const loaded = ImportState.load(statePath, targetOf(options.url, options.apiKey));
  const state = loaded.state;
  if (loaded.problem) warn(loaded.problem);
  const sender = new Sender({ ...options, onRetry: options.onRetry ?? ((reason, waitMs) => warn(`retrying in ${(waitMs / 1000).toFixed(1)} s: ${reason}`)) });
  const progress: ImportProgress = { lines: 0, sent: 0, accepted: 0, skipped: new Map(), hoursDone: 0, hoursTotal: 0, bytesRead: 0, bytesTotal: 0, batches: 0, startedAt: Date.now() };
  const problems: string[] = [];
  const problem = (message: string) => {
    problems.push(message);
    warn(message);
  };

  // The hours to import, listed first for the totals of the progress line.
  const plan: { file: ArchiveFile; hours: string[] }[] = [];
  for (const file of files) {
    if (state.isFileDone(file.name, file.size)) continue;
    try {
      const hours = await listHours(file.path);
      const left = hours.filter((hour) => !state.isHourDone(file.name, file.size, hour.name));
      progress.hoursTotal += left.length;
      progress.bytesTotal += left.reduce((sum, hour) => sum + hour.size, 0);
      plan.push({ file, hours: hours.map((hour) => hour.name) });
    } catch (failure) {
      problem(`${file.name}: not a readable zip archive (${(failure as Error).message}); skipped`);
    }
  }

  let savedAt = Date.now();
  const saveSoon = () => {
    if (Date.now() - savedAt < STATE_SAVE_INTERVAL_MS) return;
    state.save();
    savedAt = Date.now();
  };
  const complete = (hour: Hour) => {
    if (!hour.allRead || hour.pending > 0) return;
    const { name, size } = hour.file;
    state.completeHour(name, size, hour.name);
    progress.hoursDone++;
    const planned = plan.find((entry) => entry.file === hour.file)!;
    if (planned.hours.every((other) => state.isHourDone(name, size, other))) state.completeFile(name, size);
    saveSoon();
  };

  const inFlight = new Set<Promise<void>>();
  let fatal: Error | undefined;
  const send = async (batch: Batch) => {
    for (let i = 0; i < batch.groups.length; i += GROUPS_PER_REQUEST) {
      const outcome = await sender.sendGroups(batch.groups.slice(i, i + GROUPS_PER_REQUEST));
      for (const [reason, count] of outcome.skipped) add(progress.skipped, `group identification: ${reason}`, count);
    }
    if (batch.events.length > 0) {
      const outcome = await sender.sendEvents(batch.events);
      progress.accepted += outcome.accepted;
      for (const [reason, count] of outcome.skipped) add(progress.skipped, reason, count);
    }
    progress.batches++;
    for (const hour of batch.hours) {
      hour.pending--;
      complete(hour);
    }
    options.onProgress?.(progress);
  };
  const stopped = () => fatal !== undefined || options.signal?.aborted === true;
  /** Sends the batch once fewer than `concurrency` are in flight. */
  const dispatch = async (batch: Batch) => {
    while (inFlight.size >= concurrency) await Promise.race(inFlight);
    if (stopped()) return;
    progress.sent += batch.events.length;
    const sending: Promise<void> = send(batch)
      .catch((failure: Error) => {
        fatal ??= failure;
      })
      .finally(() => inFlight.delete(sending));
    inFlight.add(sending);
  };

  let batch = newBatch();
  const include = (hour: Hour) => {
    if (batch.hours.at(-1) === hour) return;
    batch.hours.push(hour);
    hour.pending++;
  };
  const flush = async () => {
    const full = batch;
    batch = newBatch();
    await dispatch(full);
  };

  reading: for (const { file } of plan) {
    try {
      for await (const entry of archiveHours(file.path, (name) => !state.isHourDone(file.name, file.size, name), (bytes) => (progress.bytesRead += bytes))) {
        const hour: Hour = { file, name: entry.name, pending: 0, allRead: false };
        try {
          for await (const lines of entry.lines) {
            for (const text of lines) {
              progress.lines++;
              let parsed: unknown;
              try {
                parsed = JSON.parse(text);
              } catch {
                add(progress.skipped, 'not JSON');
                continue;
              }
              const converted = convertLine(parsed);
              if ('skipped' in converted) {
                add(progress.skipped, converted.skipped);
                continue;
              }
              include(hour);
              if ('event' in converted) batch.events.push(converted.event);
              else batch.groups.push(...converted.groups);
              if (batch.events.length >= batchSize || batch.groups.length >= GROUPS_PER_REQUEST) await flush();
              if (stopped()) break reading;
            }
          }
          hour.allRead = true;
          complete(hour);
        } catch (failure) {
          problem(`${file.name} ${entry.name}: unreadable (${(failure as Error).message}); the hour is not recorded as imported`);
        }
      }
    } catch (failure) {
      problem(`${file.name}: reading stopped (${(failure as Error).message}); its hours not imported are not recorded`);
    }
  }
  if (!stopped() && (batch.events.length > 0 || batch.groups.length > 0)) await flush();
  await Promise.all(inFlight);
  state.save();
  if (fatal) throw fatal;
  return { ...progress, seconds: (Date.now() - progress.startedAt) / 1000, interrupted: options.signal?.aborted === true, problems, statePath };
}
