// The event segmentation view: its form → `GET /api/2/events/segmentation` → a chart, the table
// of the same numbers, and those numbers as a CSV file.
import type { Annotation, EventSegmentation, FilterOperator } from '@svc/client';
import { globalAnnotations, placeAnnotations } from '../annotations.js';
import type { ChartOptions } from '../chart.js';
import { downloadCsv, toCsv } from '../csv.js';
import { fillPicker } from '../events.js';
import { formatNumber } from '../format.js';
import { byId } from '../page.js';
import { chartPanel } from '../results.js';
import type { Client } from '../session.js';
import { defaultRange, selectedText, whenSubmitted, type View } from '../view.js';
import { segmentationChart, segmentationRows } from './model.js';
import { segmentationQuery, type Interval, type Metric, type PropertyOwner, type SegmentationChoice } from './query.js';

/** How the answer is named on the page, read with the choice (the form may change meanwhile). */
interface Presentation {
  eventName: string;
  measure: string;
  kind: ChartOptions['kind'];
  caption: string;
  fileName: string;
}

function readChoice(fields: FormData): SegmentationChoice {
  const text = (name: string) => String(fields.get(name) ?? '').trim();
  return {
    event: text('event'),
    metric: text('metric') as Metric,
    interval: Number(text('interval')) as Interval,
    start: text('start'),
    end: text('end'),
    ...(text('groupName') ? { groupBy: { owner: text('groupOwner') as PropertyOwner, name: text('groupName'), limit: Number(text('limit')) } } : {}),
    ...(text('filterName')
      ? { filter: { owner: text('filterOwner') as PropertyOwner, name: text('filterName'), operator: text('filterOperator') as FilterOperator, values: text('filterValues') } }
      : {}),
  };
}

function presentation(fields: FormData, choice: SegmentationChoice): Presentation {
  const eventName = selectedText(byId<HTMLSelectElement>('seg-event'));
  const measure = selectedText(byId<HTMLSelectElement>('seg-metric'));
  return {
    eventName,
    measure,
    kind: fields.get('kind') === 'bars' ? 'bars' : 'line',
    caption: `${measure} of ${eventName}, ${choice.start} to ${choice.end}`,
    fileName: `segmentation-${choice.event.replace(/[^\w-]+/g, '_')}-${choice.start}-${choice.end}.csv`,
  };
}

export function segmentationView(): View {
  const form = byId<HTMLFormElement>('segmentation-form');
  const results = byId('seg-results');
  const panel = chartPanel('seg');
  let client: Client | undefined;
  let csv: { fileName: string; text: string } | undefined;

  function show(answer: EventSegmentation, annotations: Annotation[], { eventName, measure, kind, caption, fileName }: Presentation): void {
    results.hidden = false;
    const { columns, rows } = segmentationRows(answer, eventName);
    const table = { caption, columns, rows: rows.map(({ header, values }) => ({ header, cells: values.map(formatNumber) })) };
    const chartCaption = `${kind === 'line' ? 'Line' : 'Bar'} chart: ${caption}. The numbers are in the table.`;
    panel.show(segmentationChart(answer, eventName), { kind, valueName: measure }, chartCaption, [table], placeAnnotations(annotations, answer.xValues));
    csv = { fileName, text: toCsv([columns, ...rows.map(({ header, values }) => [header, ...values])]) };
  }

  async function draw(): Promise<string> {
    const fields = new FormData(form);
    const choice = readChoice(fields);
    const shown = presentation(fields, choice);
    const [{ data }, annotations] = await Promise.all([
      client!.GET('/api/2/events/segmentation', { params: { query: segmentationQuery(choice) } }),
      globalAnnotations(client!),
    ]);
    show(data.data, annotations, shown);
    return `Chart drawn: ${data.data.series.length} series over ${data.data.xValues.length} periods.`;
  }

  whenSubmitted(form, results, 'Drawing the chart…', draw);
  byId('seg-csv').addEventListener('click', () => csv && downloadCsv(csv.fileName, csv.text));

  return {
    start(signedIn, events) {
      client = signedIn;
      fillPicker(byId<HTMLSelectElement>('seg-event'), events);
      defaultRange('seg');
    },
    stop() {
      client = undefined;
      csv = undefined;
      panel.clear();
      results.hidden = true;
      form.reset();
    },
  };
}
