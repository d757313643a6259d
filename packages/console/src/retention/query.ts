// What the retention form asks for, as the query of `GET /api/2/retention`.
import type { AppClientPaths } from '@svc/client';
import { reportDate } from '../dates.js';

export type RetentionQuery = AppClientPaths['/api/2/retention']['get']['parameters']['query'];
export type RetentionMode = 'nday' | 'rolling';
export type RetentionInterval = 1 | 7 | 30;

export interface RetentionChoice {
  /** The start event type, or `_new` (each user's first event ever). */
  startEvent: string;
  /** The return event type, or `_all` (any event). */
  returnEvent: string;
  mode: RetentionMode;
  interval: RetentionInterval;
  /** `YYYY-MM-DD`, both included. */
  start: string;
  end: string;
}

export function retentionQuery(choice: RetentionChoice): RetentionQuery {
  return {
    se: { event_type: choice.startEvent },
    re: { event_type: choice.returnEvent },
    rm: choice.mode,
    i: choice.interval,
    start: reportDate(choice.start),
    end: reportDate(choice.end),
  };
}
