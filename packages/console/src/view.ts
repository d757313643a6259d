// What the views share: how they start after sign-in and stop at sign-out, their form's date
// range, and how a submitted form draws its answer.
import type { EventTypeSummary } from '@svc/client';
import { lastDays } from './dates.js';
import { busy, byId } from './page.js';
import type { Client } from './session.js';

export interface View {
  /** After sign-in: the client to ask with and the event types to pick from. */
  start(client: Client, events: readonly EventTypeSummary[]): void;
  /** At sign-out: forgets the client and every answer shown. */
  stop(): void;
  /** The view is shown or hidden (another view chosen, signed out); views that poll stop while hidden. */
  shown?(visible: boolean): void;
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

/** The trimmed text of each named field of `form`, as it is now. */
export function formText(form: HTMLFormElement): (name: string) => string {
  const fields = new FormData(form);
  return (name) => String(fields.get(name) ?? '').trim();
}

/** Submitting `form` runs `draw`, its progress announced and `results` busy meanwhile. */
export function whenSubmitted(form: HTMLFormElement, results: HTMLElement, progress: string, draw: () => Promise<string>): void {
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void busy(results, progress, draw);
  });
}
