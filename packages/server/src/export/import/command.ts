// `svc-server import SOURCE --url URL --api-key KEY [--state FILE] [--concurrency N] [--batch-size N]`
// (SOURCE an export zip or a folder of them; or an Export API's URL with --start, --end,
// [--part-hours] and the source's keys in SVC_SOURCE_API_KEY / SVC_SOURCE_SECRET_KEY, kept out
// of the command line, which other users of the machine can read): runs the import with the
// progress line and the summary; the first Ctrl-C (or SIGTERM) stops it between batches,
// keeping what was acknowledged for a resumed run.
import { resolve } from 'node:path';
import { progressPrinter, summaryLines } from './progress.js';
import { MAX_EXPORT_HOURS } from '@svc/client';
import type { ExportApiSource } from './export-api.js';
import { MAX_BATCH_SIZE, runImport } from './run-import.js';

export interface ImportCommandOptions {
  url?: string;
  apiKey?: string;
  state?: string;
  concurrency?: string;
  batchSize?: string;
  start?: string;
  end?: string;
  partHours?: string;
}

function wholeNumber(option: string | undefined, name: string, max: number): number | undefined {
  if (option === undefined) return undefined;
  const value = Number(option);
  if (!(Number.isInteger(value) && value >= 1 && value <= max)) throw new Error(`--${name} is a whole number from 1 to ${max}`);
  return value;
}

/** The Export API source of a URL, with its keys from the environment. */
function exportApiSource(url: string, options: ImportCommandOptions, env: NodeJS.ProcessEnv): ExportApiSource {
  const [apiKey, secretKey] = [env.SVC_SOURCE_API_KEY, env.SVC_SOURCE_SECRET_KEY];
  if (!options.start || !options.end) throw new Error('an import from an Export API needs --start and --end (YYYYMMDDTHH, UTC)');
  if (!apiKey || !secretKey) throw new Error("an import from an Export API reads the source project's keys from SVC_SOURCE_API_KEY and SVC_SOURCE_SECRET_KEY");
  return { url: url.replace(/\/+$/, ''), apiKey, secretKey, start: options.start, end: options.end, partHours: wholeNumber(options.partHours, 'part-hours', MAX_EXPORT_HOURS) };
}

export async function importCommand(source: string | undefined, options: ImportCommandOptions, env = process.env): Promise<void> {
  if (!source || !options.url || !options.apiKey) throw new Error('import needs a source (an export zip, a folder of them or an Export API URL), --url and --api-key');
  const stop = new AbortController();
  const interrupt = () => stop.abort();
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  const printer = progressPrinter(process.stderr);
  try {
    const summary = await runImport({
      source: /^https?:\/\//i.test(source) ? exportApiSource(source, options, env) : resolve(source),
      url: options.url.replace(/\/+$/, ''),
      apiKey: options.apiKey,
      statePath: options.state === undefined ? undefined : resolve(options.state),
      concurrency: wholeNumber(options.concurrency, 'concurrency', 64),
      batchSize: wholeNumber(options.batchSize, 'batch-size', MAX_BATCH_SIZE),
      signal: stop.signal,
      onProgress: printer.onProgress,
      onWarning: (message) => {
        printer.end();
        console.error(`warning: ${message}`);
      },
    });
    printer.end();
    for (const line of summaryLines(summary)) console.log(line);
    if (summary.interrupted) process.exitCode = 130;
  } finally {
    printer.end();
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
  }
}
