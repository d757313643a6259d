// `svc-server import`: the events of export archives (files, or downloaded part by part from a
// project's Export API: export-api.ts) sent to a server's batch API. Lines are read an hour
// entry at a time, converted (@svc/client's convertExportedEvent) and sent in batches, a few at a
// time; an hour is complete once every batch holding its events is acknowledged, and the state
// file (state.ts) records it, so that an interrupted run resumes at the first hour not complete.
import { convertExportedEvent, exportHalves, type ExportPart, type GroupIdentification, type UploadEvent } from '@svc/client';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ArchiveFile, archiveFiles, archiveHours, listHours } from './archives.js';
import { downloadPart, type ExportApiSource, exportApiParts, partName } from './export-api.js';
import { ImportError } from './retrying.js';
import { Sender, type SenderOptions } from './sender.js';
import { fingerprint, ImportState, targetOf } from './state.js';

export interface ImportOptions extends SenderOptions {
  /** An export zip, or a folder of them, or a project's Export API. */
  source: string | ExportApiSource;
  /** Default: the source's path followed by `.import-state.json` (an Export API's: here, named after its host, key fingerprint and range). */
  statePath?: string;
  /** Events a request (at most the batch API's 2000). */
  batchSize?: number;
  /** Requests in flight at once. */
  concurrency?: number;
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
  /** Gzip bytes read of those to read (for the ETA; 0 of 0 from an Export API, where the hours give it). */
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

/** A file to read: an archive, or a part of an Export API's range (downloaded when its turn comes). */
interface Planned {
  file: ArchiveFile;
  /** Its hour entries; a part's once downloaded. */
  hours?: string[];
  part?: ExportPart;
  /** The part this one is a half of (done once both halves are). */
  whole?: Planned & { halves: Planned[] };
}

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
  const api = typeof options.source === 'string' ? undefined : options.source;
  const statePath = options.statePath ?? (api ? `export-${new URL(api.url).host.replace(/[^\w.-]/g, '_')}-${fingerprint(api.apiKey)}-${api.start}-${api.end}.import-state.json` : `${(options.source as string).replace(/\/+$/, '')}.import-state.json`);
  const loaded = ImportState.load(statePath, targetOf(options.url, options.apiKey));
  const state = loaded.state;
  if (loaded.problem) warn(loaded.problem);
  const onRetry = options.onRetry ?? ((reason: string, waitMs: number) => warn(`retrying in ${(waitMs / 1000).toFixed(1)} s: ${reason}`));
  // Batches already sent are seen through when the run is stopped: the sender's retries go on.
  const sender = new Sender({ ...options, onRetry, signal: undefined });
  const progress: ImportProgress = { lines: 0, sent: 0, accepted: 0, skipped: new Map(), hoursDone: 0, hoursTotal: 0, bytesRead: 0, bytesTotal: 0, batches: 0, startedAt: Date.now() };
  const problems: string[] = [];
  const problem = (message: string) => {
    problems.push(message);
    warn(message);
  };

  // The hours to import, listed first for the totals of the progress line (an Export API's
  // parts count the hours of their range).
  const plan: Planned[] = [];
  const downloads = api ? mkdtempSync(join(tmpdir(), 'svc-import-')) : undefined;
  for (const part of api ? exportApiParts(api) : []) {
    const file = { path: join(downloads!, 'part.zip'), name: partName(api!, part), size: 0 };
    if (state.isFileDone(file.name, file.size)) continue;
    progress.hoursTotal += part.hours;
    plan.push({ file, part });
  }
  for (const file of typeof options.source === 'string' ? archiveFiles(options.source) : []) {
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
  /** Records the file done; a part's hours count as done, unless they were counted in its halves. */
  const completeFile = (planned: Planned, countHours = true) => {
    state.completeFile(planned.file.name, planned.file.size);
    if (planned.part && countHours) progress.hoursDone += planned.part.hours;
    const { whole } = planned;
    if (whole?.halves.every((half) => state.isFileDone(half.file.name, half.file.size))) completeFile(whole, false);
    else saveSoon();
  };
  const complete = (hour: Hour) => {
    if (!hour.allRead || hour.pending > 0) return;
    const { name, size } = hour.file;
    state.completeHour(name, size, hour.name);
    const planned = plan.find((entry) => entry.file === hour.file)!;
    if (!planned.part) progress.hoursDone++;
    if (planned.hours!.every((other) => state.isHourDone(name, size, other))) completeFile(planned);
    else saveSoon();
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

  /** Downloads a part when its turn comes: whether it has hours to read (a part too large is replaced by its halves). */
  const download = async (planned: Planned, at: number): Promise<boolean> => {
    const part = planned.part!;
    // A half done in an earlier run, of a part asked for again.
    if (state.isFileDone(planned.file.name, planned.file.size)) {
      completeFile(planned);
      return false;
    }
    const got = await downloadPart(api!, part, planned.file.path, { ...options, onRetry });
    if ('tooLarge' in got) {
      warn(`${planned.file.name}: ${got.tooLarge}; asking for it in two halves`);
      const whole = Object.assign(planned, { halves: [] as Planned[] });
      whole.halves.push(...exportHalves(part).map((half) => ({ file: { ...planned.file, name: partName(api!, half) }, part: half, whole })));
      plan.splice(at + 1, 0, ...whole.halves);
      return false;
    }
    if ('empty' in got) {
      completeFile(planned);
      return false;
    }
    planned.hours = (await listHours(planned.file.path)).map((hour) => hour.name);
    if (planned.hours.every((name) => state.isHourDone(planned.file.name, planned.file.size, name))) completeFile(planned);
    return true;
  };

  try {
    reading: for (let at = 0; at < plan.length && !stopped(); at++) {
      const planned = plan[at]!;
      const { file } = planned;
      try {
        if (planned.part && !(await download(planned, at))) continue;
        for await (const entry of archiveHours(file.path, (name) => !state.isHourDone(file.name, file.size, name), (bytes) => (progress.bytesRead += planned.part ? 0 : bytes))) {
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
                const converted = convertExportedEvent(parsed);
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
        if (failure instanceof ImportError) fatal ??= failure;
        else if (!options.signal?.aborted) problem(`${file.name}: reading stopped (${(failure as Error).message}); its hours not imported are not recorded`);
      }
    }
    if (!stopped() && (batch.events.length > 0 || batch.groups.length > 0)) await flush();
    await Promise.all(inFlight);
  } finally {
    if (downloads) rmSync(downloads, { recursive: true, force: true });
  }
  state.save();
  if (fatal) throw fatal;
  return { ...progress, seconds: (Date.now() - progress.startedAt) / 1000, interrupted: options.signal?.aborted === true, problems, statePath };
}
