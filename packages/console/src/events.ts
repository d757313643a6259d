// The event pickers, filled from `GET /api/2/events/list`: the event types charts may show.
import type { EventTypeSummary } from '@svc/client';
import type { Client } from './session.js';

/** The project's event types, minus those its tracking plan hides or deleted, by name. */
export async function pickableEvents(client: Client): Promise<EventTypeSummary[]> {
  const { data } = await client.GET('/api/2/events/list');
  return data.data.filter((type) => !type.hidden && !type.deleted).sort((a, b) => a.display.localeCompare(b.display));
}

/**
 * Fills a picker with the event types (shown by display name) after its `data-fixed` options
 * (`_new`, `_all`), keeping its choice when it is still there.
 */
export function fillPicker(select: HTMLSelectElement, events: readonly EventTypeSummary[], preferred?: string): void {
  const kept = select.value || preferred;
  const fixed = select.querySelectorAll('option[data-fixed]');
  select.replaceChildren(...fixed, ...events.map((type) => new Option(type.display, type.value)));
  if (kept && [...select.options].some((option) => option.value === kept)) select.value = kept;
}
