// What the two views share: how they start after sign-in and stop at sign-out, and their form's
// date range.
import type { EventTypeSummary } from '@svc/client';
import { lastDays } from './dates.js';
import { byId } from './page.js';
import type { Client } from './session.js';

export interface View {
  /** After sign-in: the client to ask with and the event types to pick from. */
  start(client: Client, events: readonly EventTypeSummary[]): void;
  /** At sign-out: forgets the client and every answer shown. */
  stop(): void;
}

/** The range's inputs (`PREFIX-start`, `PREFIX-end`) hold the last 30 days unless chosen already. */
export function defaultRange(prefix: string): void {
  const range = lastDays(new Date(), 30);
  for (const end of ['start', 'end'] as const) {
    const input = byId<HTMLInputElement>(`${prefix}-${end}`);
    if (!input.value) input.value = range[end];
  }
}

/** What a picker shows for its choice (an event type's display name, a measure's name). */
export const selectedText = (select: HTMLSelectElement): string => select.selectedOptions[0]?.text ?? '';
