// The funnel view: its steps and options → `GET /api/2/funnels` → step bars (one series per
// group) labelled with the conversion, and one table per group.
import type { FunnelSeries } from '@svc/client';
import { clearChart, drawChart } from '../chart.js';
import { byId } from '../page.js';
import type { Client } from '../session.js';
import { renderTable } from '../table.js';
import { defaultRange, whenSubmitted, type View } from '../view.js';
import { conversionLabel, funnelChart, funnelTable } from './model.js';
import { funnelQuery, type FunnelChoice, type FunnelMode } from './query.js';
import { funnelSteps } from './steps.js';

export function funnelView(): View {
  const form = byId<HTMLFormElement>('funnel-form');
  const results = byId('funnel-results');
  const chart = byId('funnel-chart');
  const steps = funnelSteps();
  let client: Client | undefined;

  function readChoice(chosen: { value: string }[]): FunnelChoice {
    const fields = new FormData(form);
    const text = (name: string) => String(fields.get(name) ?? '').trim();
    return {
      steps: chosen.map((step) => step.value),
      mode: text('mode') as FunnelMode,
      windowSeconds: Number(text('window')) * Number(text('windowUnit')),
      start: text('start'),
      end: text('end'),
      ...(text('group') ? { groupBy: { name: text('group'), limit: Number(text('limit')) } } : {}),
    };
  }

  function show(funnels: FunnelSeries[], stepNames: string[], choice: FunnelChoice): void {
    results.hidden = false;
    drawChart(chart, funnelChart(funnels, stepNames), { kind: 'bars', valueName: 'Users', barLabel: conversionLabel(funnels) });
    const groups = choice.groupBy ? `, one funnel per ${choice.groupBy.name}` : '';
    byId('funnel-caption').textContent = `Bar chart: users reaching each of ${stepNames.length} steps, entered ${choice.start} to ${choice.end}${groups}; each bar is labelled with its conversion. The numbers are in the tables.`;
    byId('funnel-tables').replaceChildren(...funnels.map((funnel) => renderTable(funnelTable(funnel, stepNames))));
  }

  async function draw(): Promise<string> {
    const chosen = steps.chosen();
    const choice = readChoice(chosen);
    const { data } = await client!.GET('/api/2/funnels', { params: { query: funnelQuery(choice) } });
    show(data.data, chosen.map((step) => step.name), choice);
    return `Funnel drawn: ${data.data.length === 1 ? 'one funnel' : `${data.data.length} funnels`} of ${choice.steps.length} steps.`;
  }

  whenSubmitted(form, results, 'Computing the funnel…', draw);

  return {
    start(signedIn, events) {
      client = signedIn;
      steps.fill(events);
      defaultRange('funnel');
    },
    stop() {
      client = undefined;
      clearChart(chart);
      byId('funnel-tables').replaceChildren();
      results.hidden = true;
      steps.clear();
      form.reset();
    },
  };
}
