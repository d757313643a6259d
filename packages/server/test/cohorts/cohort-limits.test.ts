// The cohort export limits per project, with the documented figures: jobs in progress,
// requests per 10 minutes and per calendar month, and the reporting slots they share.
import { expect, test } from 'vitest';
import { CohortExportLimits, type ExportAdmission } from '../../src/cohorts/limits.js';
import { InMemoryReportingLimits } from '../../src/shared/reporting-limits.js';

const START = Date.UTC(2026, 10, 1);
const admitted = async (admission: Promise<ExportAdmission>) => {
  const answer = await admission;
  if (!('done' in answer)) throw new Error(`refused: ${answer.message}`);
  return answer;
};

test('at most 4 exports in progress per project; another project is not counted', async () => {
  const limits = new CohortExportLimits(new InMemoryReportingLimits());
  const running = await Promise.all([1, 2, 3, 4].map(() => admitted(limits.admit(1, START))));
  expect(await limits.admit(1, START)).toMatchObject({ message: expect.stringMatching(/4 cohort exports in progress/), retryAfterSeconds: 60 });
  (await admitted(limits.admit(2, START))).done();
  running[0]!.done();
  running[0]!.done();
  await admitted(limits.admit(1, START));
  expect('message' in (await limits.admit(1, START))).toBe(true);
});

test('at most 60 export requests per 10 minutes', async () => {
  const limits = new CohortExportLimits(new InMemoryReportingLimits());
  for (let i = 0; i < 60; i++) (await admitted(limits.admit(1, START + i * 1000))).done();
  expect(await limits.admit(1, START + 60_000)).toMatchObject({ message: expect.stringMatching(/60 cohort export requests per 10 minutes/) });
  await admitted(limits.admit(1, START + 600_001));
});

test('at most 500 export requests per calendar month, until the next month begins', async () => {
  const limits = new CohortExportLimits(new InMemoryReportingLimits());
  for (let i = 0; i < 500; i++) (await admitted(limits.admit(1, START + i * 11_000))).done();
  const refused = await limits.admit(1, START + 500 * 11_000);
  expect(refused).toMatchObject({ message: expect.stringMatching(/500 cohort export requests per month/) });
  expect((refused as { retryAfterSeconds: number }).retryAfterSeconds).toBe((Date.UTC(2026, 11, 1) - (START + 500 * 11_000)) / 1000);
  await admitted(limits.admit(1, Date.UTC(2026, 11, 1)));
});

test('an export takes one of the 5 reporting slots until its job is done', async () => {
  const reporting = new InMemoryReportingLimits();
  const limits = new CohortExportLimits(reporting);
  const queries = await Promise.all([1, 2, 3, 4].map(() => reporting.admit(1, 0, START)));
  const job = await admitted(limits.admit(1, START));
  expect(await reporting.admit(1, 0, START)).toMatchObject({ exceeded: 'concurrent_requests' });
  job.done();
  expect('release' in (await reporting.admit(1, 0, START))).toBe(true);
  // Five reporting requests now run: the export waits for one of them.
  expect(await limits.admit(1, START)).toMatchObject({ message: expect.stringMatching(/5 reporting requests at a time/) });
  if ('release' in queries[0]!) queries[0].release();
  await admitted(limits.admit(1, START));
});

test('exports admitted at once are counted one after the other', async () => {
  const limits = new CohortExportLimits(new InMemoryReportingLimits({ concurrentRequests: 100, costPerFiveMinutes: 1000, costPerHour: 108_000 }));
  const answers = await Promise.all(Array.from({ length: 10 }, () => limits.admit(1, START)));
  expect(answers.filter((answer) => 'done' in answer)).toHaveLength(4);
});
