// Reads an export archive in a test: each entry's name, zip fields and gunzipped JSON lines.
import { gunzipSync } from 'node:zlib';
import yauzl from 'yauzl';

export interface ExportEntry {
  name: string;
  compressionMethod: number;
  /** General purpose bit 3: sizes in a data descriptor after the data (a streamed entry). */
  dataDescriptor: boolean;
  /** The gunzipped file as text. */
  text: string;
}

export function readExportZip(archive: Buffer): Promise<ExportEntry[]> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(archive, { lazyEntries: true }, (opened, zip) => {
      if (opened || !zip) return reject(opened ?? new Error('no zip'));
      const entries: ExportEntry[] = [];
      zip.on('error', reject);
      zip.on('end', () => resolve(entries));
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (failed, stream) => {
          if (failed || !stream) return reject(failed ?? new Error('no stream'));
          const chunks: Buffer[] = [];
          stream.on('data', (chunk: Buffer) => chunks.push(chunk));
          stream.on('error', reject);
          stream.on('end', () => {
            entries.push({
              name: entry.fileName,
              compressionMethod: entry.compressionMethod,
              dataDescriptor: (entry.generalPurposeBitFlag & 0x8) !== 0,
              text: gunzipSync(Buffer.concat(chunks)).toString('utf8'),
            });
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  });
}

/** The JSON lines of an entry (the file ends with a newline). */
export function linesOf(entry: ExportEntry): string[] {
  if (!entry.text.endsWith('\n')) throw new Error(`${entry.name} does not end with a newline`);
  return entry.text.slice(0, -1).split('\n');
}
