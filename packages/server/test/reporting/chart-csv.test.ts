// The CSV of a saved chart, as the platform writes it.
import { expect, test } from 'vitest';
import { chartCsv } from '../../src/reporting/csv.js';

test('quoted cells, TAB-prefixed text, CRLF lines, title and metric before the header', () => {
  expect(chartCsv({ title: 'Plays "daily"', metric: 'Uniques', header: ['Segment', '2026-11-02', '2026-11-03'], rows: [{ label: 'All users', values: [2, 1.5] }] })).toBe(
    '"\tPlays ""daily"""\r\n\r\n"\tUniques"\r\n\r\n"\tSegment","\t2026-11-02","\t2026-11-03"\r\n"\tAll users","2","1.5"\r\n',
  );
});
