// The project's annotations (`GET /api/3/annotations`) on the time axis of the console's charts:
// the global ones (those of a saved chart, `chart_id`, belong to that chart), each placed in the
// period it falls in, and listed under the chart for readers who do not see it.
import type { Annotation } from '@svc/client';
import type { ChartMarker } from './chart.js';
import type { Client } from './session.js';

export interface PlacedAnnotation extends ChartMarker {
  /** When, as the list says it: `2026-11-18 14:00 UTC`, `… to …` for a range. */
  when: string;
}

const HOUR_MS = 3_600_000;

/** The annotations shown on every chart. */
export async function globalAnnotations(client: Client): Promise<Annotation[]> {
  const { data } = await client.GET('/api/3/annotations');
  return data.data.filter((annotation) => annotation.chart_id === null);
}

/** A period's start: the answers write project days (`2026-11-18`) and hours (`2026-11-18T14:00:00`), read as UTC. */
const periodStart = (period: string) => Date.parse(period.length === 10 ? `${period}T00:00:00Z` : `${period.slice(0, 19)}Z`);

const written = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/**
 * Where each annotation falls on an axis of `periods` (oldest first, each until the next; the
 * last as long as the one before, or an hour): the chart puts period i around x = i, from
 * i - 0.5 to i + 0.5, and the annotation that far into it. Those outside the periods are left out.
 */
export function placeAnnotations(annotations: readonly Annotation[], periods: readonly string[]): PlacedAnnotation[] {
  const starts = periods.map(periodStart);
  const last = starts.length - 1;
  const ends = starts.map((start, at) => starts[at + 1] ?? start + (last > 0 ? start - starts[last - 1]! : HOUR_MS));
  return annotations.flatMap((annotation) => {
    const time = Date.parse(annotation.start);
    const at = starts.findIndex((start, index) => start <= time && time < ends[index]!);
    if (at < 0) return [];
    const when = annotation.end ? `${written(time)} to ${written(Date.parse(annotation.end))}` : written(time);
    return [{ at: at - 0.5 + (time - starts[at]!) / (ends[at]! - starts[at]!), label: annotation.label, when }];
  });
}

/** The list of the annotations a chart shows, named; hidden when there are none. */
export function listAnnotations(list: HTMLElement, placed: readonly PlacedAnnotation[]): void {
  list.hidden = placed.length === 0;
  list.replaceChildren(
    ...placed.map(({ label, when }) => {
      const item = document.createElement('li');
      item.textContent = `${label}: ${when}`;
      return item;
    }),
  );
}
