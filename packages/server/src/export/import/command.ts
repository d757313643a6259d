// `svc-server import SOURCE --url URL --api-key KEY [--state FILE] [--concurrency N] [--batch-size N]`:
// runs the import with the progress line and the summary; the first Ctrl-C (or SIGTERM) stops
// it between batches, keeping what was acknowledged for a resumed run.
import { resolve } from 'node:path';
import { progressPrinter, summaryLines } from './progress.js';
import { MAX_BATCH_SIZE, runImport } from './run-import.js';

export interface ImportCommandOptions {
  url?: string;
  apiKey?: string;
  state?: string;
  concurrency?: string;
  batchSize?: string;
}

function wholeNumber(option: string | undefined, name: string, max: number): number | undefined {
  if (option === undefined) return undefined;
  const value = Number(option);
  if (!(Number.isInteger(value) && value >= 1 && value <= max)) throw new Error(`--${name} is a whole number from 1 to ${max}`);
  return value;
}

export async function importCommand(source: string | undefined, options: ImportCommandOptions): Promise<void> {
  if (!source || !options.url || !options.apiKey) throw new Error('import needs a source (an export zip or a folder of them), --url and --api-key');
  const stop = new AbortController();
  const interrupt = () => stop.abort();
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  const printer = progressPrinter(process.stderr);
  try {
    const summary = await runImport({
      source: resolve(source),
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
