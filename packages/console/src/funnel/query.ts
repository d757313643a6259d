// What the funnel form asks for, as the query of `GET /api/2/funnels`.
import type { AppClientPaths } from '@svc/client';
import { reportDate } from '../dates.js';

export type FunnelQuery = AppClientPaths['/api/2/funnels']['get']['parameters']['query'];
export type FunnelMode = 'ordered' | 'unordered' | 'sequential';

export interface FunnelChoice {
  /** The event type of each step, in order. */
  steps: string[];
  mode: FunnelMode;
  windowSeconds: number;
  /** Entry days, `YYYY-MM-DD`, both included. */
  start: string;
  end: string;
  /** A user property: one funnel per value, the `limit` largest. */
  groupBy?: { name: string; limit: number };
}

export function funnelQuery(choice: FunnelChoice): FunnelQuery {
  return {
    e: choice.steps.map((event_type) => ({ event_type })),
    mode: choice.mode,
    cs: choice.windowSeconds,
    start: reportDate(choice.start),
    end: reportDate(choice.end),
    ...(choice.groupBy ? { g: choice.groupBy.name, limit: choice.groupBy.limit } : {}),
  };
}
