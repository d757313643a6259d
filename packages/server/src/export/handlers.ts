// The Export API: the project's raw events of a range of hours of server upload time, as a zip
// archive of gzip-compressed JSON-lines files streamed as it is written (archive.ts).
import type { HandlerRequest, Reply } from '../http/operations.js';
import { estimatedExportBytes } from '../store/exported-events.js';
import type { ExportedEvents } from '../store/types.js';
import { exportArchive } from './archive.js';
import { exportRange } from './hours.js';

/** The platform's limit: 4 GB of export (judged on the uncompressed lines, estimated before the answer starts). */
export const DEFAULT_EXPORT_MAX_BYTES = 2 ** 32;

const badRequest = (error: string) => ({ status: 400 as const, body: { code: 400, error } });
const gigabytes = (bytes: number) => String(Number((bytes / 2 ** 30).toFixed(1)));

export class ExportHandlers {
  constructor(
    private readonly events: ExportedEvents,
    private readonly maxBytes: number = DEFAULT_EXPORT_MAX_BYTES,
  ) {}

  getEventExport = async (request: HandlerRequest<'getEventExport'>): Promise<Reply<'getEventExport'>> => {
    const appId = request.caller.project!.app_id;
    const { start, end } = request.query as { start: string; end: string };
    const range = exportRange(start, end);
    if ('problem' in range) return badRequest(range.problem);
    const hours = await this.events.exportHours(appId, range.fromMs, range.toMs);
    if (hours.length === 0) return { status: 404, body: { code: 404, error: `No events from ${start} to ${end}` } };
    const bytes = estimatedExportBytes(hours);
    if (bytes > this.maxBytes) {
      return badRequest(`The export from ${start} to ${end} is larger than ${gigabytes(this.maxBytes)} GB (about ${gigabytes(bytes)} GB): choose a shorter range`);
    }
    const archive = exportArchive(
      appId,
      hours.map((hour) => hour.hourMs),
      (fromMs, toMs) => this.events.exportLines(appId, fromMs, toMs),
    );
    return {
      status: 200,
      // A stream: Fastify sends it as it is written.
      body: archive as unknown as string,
      headers: { 'content-type': 'application/zip', 'content-disposition': `attachment; filename="${appId}_${start}_${end}.zip"` },
    };
  };
}
