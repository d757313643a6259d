// The event pickers, filled from `GET /api/2/events/list`: the event types charts may show.
import type { EventTypeSummary } from '@svc/client';
import type { Client } from './session.js';

/** The project's event types, minus those its tracking plan hides or deleted, by name. */
export async function pickableEvents(client: Client): Promise<EventTypeSummary[]> {
  const { data } = await client.GET('/api/2/events/list');
  return data.data.filter((type) => !type.hidden && !type.deleted).sort((a, b) => a.display.localeCompare(b.display));
}

/** Fills a picker with the event types (shown by display name), keeping its choice when it is still there. */
export function fillPicker(select: HTMLSelectElement, events: readonly EventTypeSummary[], preferred?: string): void {
  const kept = select.value || preferred;
  select.replaceChildren(...events.map((type) => new Option(type.display, type.value)));
  if (kept && events.some((type) => type.value === kept)) select.value = kept;
}
