// The cohort export limits per project, with the documented figures: jobs in progress,
// requests per 10 minutes and per calendar month, and the reporting slots they share.
import { expect, test } from 'vitest';
import { CohortExportLimits } from '../src/cohorts/limits.js';
import { ReportingLimits } from '../src/reporting/limits.js';

const START = Date.UTC(2026, 10, 1);
const admitted = (admission: ReturnType<CohortExportLimits['admit']>) => {
  if (!('done' in admission)) throw new Error(`refused: ${admission.message}`);
  return admission;
};

test('at most 4 exports in progress per project; another project is not counted', () => {
  const limits = new CohortExportLimits(new ReportingLimits());
  const running = [1, 2, 3, 4].map(() => admitted(limits.admit(1, START)));
  expect(limits.admit(1, START)).toMatchObject({ message: expect.stringMatching(/4 cohort exports in progress/), retryAfterSeconds: 60 });
  admitted(limits.admit(2, START)).done();
  running[0]!.done();
  running[0]!.done();
  admitted(limits.admit(1, START));
  expect('message' in limits.admit(1, START)).toBe(true);
});

test('at most 60 export requests per 10 minutes', () => {
  const limits = new CohortExportLimits(new ReportingLimits());
  for (let i = 0; i < 60; i++) admitted(limits.admit(1, START + i * 1000)).done();
  expect(limits.admit(1, START + 60_000)).toMatchObject({ message: expect.stringMatching(/60 cohort export requests per 10 minutes/) });
  admitted(limits.admit(1, START + 600_001));
});

test('at most 500 export requests per calendar month, until the next month begins', () => {
  const limits = new CohortExportLimits(new ReportingLimits());
  for (let i = 0; i < 500; i++) admitted(limits.admit(1, START + i * 11_000)).done();
  const refused = limits.admit(1, START + 500 * 11_000);
  expect(refused).toMatchObject({ message: expect.stringMatching(/500 cohort export requests per month/) });
  expect((refused as { retryAfterSeconds: number }).retryAfterSeconds).toBe((Date.UTC(2026, 11, 1) - (START + 500 * 11_000)) / 1000);
  admitted(limits.admit(1, Date.UTC(2026, 11, 1)));
});

test('an export takes one of the 5 reporting slots until its job is done', () => {
  const reporting = new ReportingLimits();
  const limits = new CohortExportLimits(reporting);
  const queries = [1, 2, 3, 4].map(() => reporting.admit(1, 0, START));
  const job = admitted(limits.admit(1, START));
  expect(reporting.admit(1, 0, START)).toMatchObject({ exceeded: 'concurrent_requests' });
  job.done();
  expect('release' in reporting.admit(1, 0, START)).toBe(true);
  // Five reporting requests now run: the export waits for one of them.
  expect(limits.admit(1, START)).toMatchObject({ message: expect.stringMatching(/5 reporting requests at a time/) });
  if ('release' in queries[0]!) queries[0].release();
  admitted(limits.admit(1, START));
});
