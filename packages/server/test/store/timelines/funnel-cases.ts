// Funnel questions every per-user path must answer as the SQL does (the DuckDB engine's
// timelines, timelines.test.ts; ClickHouse's users read for the question,
// clickhouse/user-timelines.test.ts): the seeded dataset's questions in every mode, and the
// small datasets of the cases such paths get wrong.
import type { FunnelMode } from '../../../src/model/funnel-times.js';
import type { UploadEvent } from '../../reporting/dataset.js';

export interface FunnelQuestion {
  start: string;
  end: string;
  steps: string[];
  mode: FunnelMode;
  /** Conversion window, seconds. */
  cs: number;
}

export const MODES = ['ordered', 'sequential', 'unordered'] as const;
// Mon 2026-01-19 … Sun 2026-03-01; the ranges cross month ends and start mid-week.
export const MONTH_EDGE = { start: '20260128', end: '20260210' };
export const WIDE = { start: '20260121', end: '20260227' };

/** Questions on the seeded dataset (`generateBatches`' default dates). */
export const SEEDED_QUESTIONS: [string, FunnelQuestion][] = MODES.flatMap((mode): [string, FunnelQuestion][] => [
  [`${mode} A → B → C, one day`, { ...MONTH_EDGE, steps: ['A', 'B', 'C'], mode, cs: 86_400 }],
  [`${mode} A → B, 30 minutes`, { ...WIDE, steps: ['A', 'B'], mode, cs: 1_800 }],
  [`${mode} A → B → C → Search, 30 days`, { ...WIDE, steps: ['A', 'B', 'C', 'Search'], mode, cs: 30 * 86_400 }],
  [`${mode} A → A, two days`, { ...MONTH_EDGE, steps: ['A', 'A'], mode, cs: 2 * 86_400 }],
  [`${mode} _active → ce:B → _all, an hour`, { ...MONTH_EDGE, steps: ['_active', 'ce:B', '_all'], mode, cs: 3_600 }],
  [`${mode} an unknown event type`, { ...MONTH_EDGE, steps: ['A', 'nothing'], mode, cs: 86_400 }],
  [`${mode}, the window past the dataset's end`, { start: '20260225', end: '20260301', steps: ['A', 'B', 'C'], mode, cs: 7 * 86_400 }],
]);

const MINUTE = 60_000;
const T0 = Date.UTC(2026, 5, 10, 8);
/** A time `minutes` after 2026-06-10 08:00 UTC. */
export const at = (minutes: number) => T0 + minutes * MINUTE;
/** The range around `at`'s times. */
export const JUNE = { start: '20260610', end: '20260612' };

/** Same-time events: two at one moment in the reverse of step order, identical ones, another type among them. */
export const SAME_TIME_EVENTS: UploadEvent[] = [
  { event_type: 'B', user_id: 'u1', time: at(0) },
  { event_type: 'A', user_id: 'u1', time: at(0) },
  { event_type: 'A', user_id: 'u2', time: at(5) },
  { event_type: 'A', user_id: 'u2', time: at(5) },
  { event_type: 'X', user_id: 'u2', time: at(5) },
  { event_type: 'B', user_id: 'u2', time: at(5) },
];

/** An anonymous device's events and a user's on another device (A → B → C across them), then the device identified as the user: merged. */
export const MERGED_USERS: { before: UploadEvent[]; identified: UploadEvent[] } = {
  before: [
    { event_type: 'A', device_id: 'd1', time: at(0) },
    { event_type: 'C', device_id: 'd1', time: at(20) },
    { event_type: 'B', user_id: 'ada', device_id: 'd2', time: at(10) },
  ],
  identified: [{ event_type: 'X', user_id: 'ada', device_id: 'd1', time: at(30) }],
};
