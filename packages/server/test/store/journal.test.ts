// A failed or incomplete journal write never leaves a torn line for later lines to continue:
// the segment is cut back to its acknowledged bytes, or rotated where that fails too.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { Journal } from '../../src/store/journal.js';

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

interface Faults {
  /** The next writev writes only this many bytes of its buffers and reports so. */
  shortWrite?: number;
  truncateFails?: boolean;
}

/** Opens segments whose handles fail as `faults` says (each fault once). */
function faultyOpen(faults: Faults) {
  return async (path: string): Promise<FileHandle> => {
    const real = await open(path, 'a');
    return new Proxy(real, {
      get(target, property) {
        if (property === 'writev' && faults.shortWrite !== undefined) {
          const bytes = faults.shortWrite;
          delete faults.shortWrite;
          return async (buffers: Buffer[]) => {
            await target.write(Buffer.concat(buffers).subarray(0, bytes));
            return { bytesWritten: bytes, buffers };
          };
        }
        if (property === 'truncate' && faults.truncateFails) {
          delete faults.truncateFails;
          return async () => {
            throw new Error('EIO');
          };
        }
        const value = Reflect.get(target, property) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  };
}

const line = (text: string) => Buffer.from(`${JSON.stringify({ text })}\n`);

test('an incomplete write is refused and cut off; the next line starts clean', async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-journal-'));
  const faults: Faults = {};
  const journal = new Journal(dir, faultyOpen(faults));
  await journal.openNewSegment();
  await journal.append(line('first'));
  faults.shortWrite = 7;
  await expect(journal.append(line('torn'))).rejects.toThrow(/incomplete/);
  await journal.append(line('after'));
  const [segment] = journal.existingSegments();
  expect(readFileSync(segment!.path, 'utf8')).toBe(`${line('first')}${line('after')}`);
  expect(journal.needsRotation).toBe(false);
  await journal.close();
});

test('when the torn tail cannot be cut off, writes are refused until the segment is rotated', async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-journal-'));
  const faults: Faults = {};
  const journal = new Journal(dir, faultyOpen(faults));
  await journal.openNewSegment();
  await journal.append(line('first'));
  Object.assign(faults, { shortWrite: 5, truncateFails: true });
  await expect(journal.append(line('torn'))).rejects.toThrow(/incomplete/);
  expect(journal.needsRotation).toBe(true);
  await expect(journal.append(line('refused'))).rejects.toThrow(/torn tail/);
  const sealed = await journal.rotate();
  expect(readFileSync(sealed!.path, 'utf8')).toBe(`${line('first')}${line('torn').subarray(0, 5)}`);
  await journal.append(line('after'));
  const fresh = journal.existingSegments().find((s) => s.name !== sealed!.name)!;
  expect(readFileSync(fresh.path, 'utf8')).toBe(`${line('after')}`);
  await journal.close();
});

test("a sealed segment's torn tail is cut at its last whole line, however long the tail", async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-journal-'));
  const journal = new Journal(dir);
  const whole = `${line('a')}${line('b'.repeat(100_000))}`;
  const cases: [content: string, kept: string][] = [
    [whole, whole],
    [`${whole}{"text":"${'c'.repeat(200_000)}`, whole],
    [`${line('a')}{"text":"x`, line('a').toString()],
    ['{"text":"no line ends here', ''],
    ['', ''],
  ];
  for (const [i, [content, kept]] of cases.entries()) {
    const path = join(dir, `segment-${i}.ndjson`);
    writeFileSync(path, content);
    await journal.trimTornTail({ name: `segment-${i}.ndjson`, path });
    expect(readFileSync(path, 'utf8'), `case ${i}`).toBe(kept);
  }
});
