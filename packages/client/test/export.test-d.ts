import { describe, expectTypeOf, it } from 'vitest';
import { createAppClient, createIngestClient, exportEvents, importFromExport, type ExportedEvent, type ImportFromExportSummary } from '../src/index.js';

const app = createAppClient({ apiKey: 'k', secretKey: 's' });
const ingest = createIngestClient({ apiKey: 'k' });

describe('exportEvents', () => {
  it('yields typed exported events', () => {
    expectTypeOf(exportEvents(app, '20261120T00', '20261120T23')).toEqualTypeOf<AsyncGenerator<ExportedEvent, void, undefined>>();
    expectTypeOf<ExportedEvent['$insert_id']>().toEqualTypeOf<string | null>();
    expectTypeOf<ExportedEvent['svc_id']>().toEqualTypeOf<number | null>();
  });

  it('rejects another host role client and options of the wrong type', () => {
    // @ts-expect-error the export is served by the application host
    exportEvents(ingest, '20261120T00', '20261120T23');
    // @ts-expect-error partHours is a number
    exportEvents(app, '20261120T00', '20261120T23', { partHours: '6' });
  });
});

describe('importFromExport', () => {
  it('reads from an application host client and writes to an ingestion client', () => {
    expectTypeOf(importFromExport(app, ingest, '20261120T00', '20261120T23')).toEqualTypeOf<Promise<ImportFromExportSummary>>();
    // @ts-expect-error the target is an ingestion client
    void importFromExport(app, app, '20261120T00', '20261120T23');
    // @ts-expect-error the source is an application host client
    void importFromExport(ingest, ingest, '20261120T00', '20261120T23');
    // @ts-expect-error min_id_length is always 1: ids the source accepted are taken
    void importFromExport(app, ingest, '20261120T00', '20261120T23', { upload: { min_id_length: 5 } });
  });
});
