// The users view, over one range of days and one interval: active or new users per period
// (`GET /api/2/users`) as a line, the sessions by length (`GET /api/2/sessions/length`) as bars,
// and the retention of the users after their start (`GET /api/2/retention`) as a line; each
// chart with its table.
import { globalAnnotations, placeAnnotations } from '../annotations.js';
import { reportDate } from '../dates.js';
import { fillPicker } from '../events.js';
import { byId } from '../page.js';
import { chartPanel } from '../results.js';
import { retentionChart, retentionTable } from '../retention/model.js';
import { retentionQuery, type RetentionInterval, type RetentionMode } from '../retention/query.js';
import type { Client } from '../session.js';
import { defaultRange, formText, selectedText, whenSubmitted, type View } from '../view.js';
import { sessionsChart, sessionsTable, usersChart, usersTable } from './model.js';

const TABLE_NOTE = 'The numbers are in the table.';

export function usersView(): View {
  const form = byId<HTMLFormElement>('users-form');
  const results = byId('users-results');
  const users = chartPanel('users');
  const sessions = chartPanel('sessions');
  const retention = chartPanel('retention');
  const startEvent = byId<HTMLSelectElement>('retention-start-event');
  const returnEvent = byId<HTMLSelectElement>('retention-return-event');
  let client: Client | undefined;

  async function draw(): Promise<string> {
    const text = formText(form);
    const interval = Number(text('interval')) as RetentionInterval;
    const measure = selectedText(byId<HTMLSelectElement>('users-metric'));
    const per = selectedText(byId<HTMLSelectElement>('users-interval')).toLowerCase();
    const days = `${text('start')} to ${text('end')}`;
    const range = { start: reportDate(text('start')), end: reportDate(text('end')) };
    const mode = text('mode') as RetentionMode;
    const retentionChoice = { startEvent: text('startEvent'), returnEvent: text('returnEvent'), mode, interval, start: text('start'), end: text('end') };
    const [counted, lengths, retained, annotations] = await Promise.all([
      client!.GET('/api/2/users', { params: { query: { ...range, m: text('metric') as 'active' | 'new', i: interval } } }),
      client!.GET('/api/2/sessions/length', { params: { query: range } }),
      client!.GET('/api/2/retention', { params: { query: retentionQuery(retentionChoice) } }),
      globalAnnotations(client!),
    ]);
    const [cohorts] = retained.data.data.series;
    if (!cohorts) throw new Error('The retention answer holds no series.');
    results.hidden = false;
    const usersCaption = `${measure}, ${per}, ${days}`;
    users.show(usersChart(counted.data.data, measure), { kind: 'line', valueName: measure }, `Line chart: ${usersCaption}. ${TABLE_NOTE}`, [
      usersTable(counted.data.data, measure, usersCaption),
    ], placeAnnotations(annotations, counted.data.data.xValues));
    const sessionsCaption = `Sessions by length, started ${days}`;
    sessions.show(sessionsChart(lengths.data.data), { kind: 'bars', valueName: 'Sessions' }, `Bar chart: ${sessionsCaption}. ${TABLE_NOTE}`, [
      sessionsTable(lengths.data.data, sessionsCaption),
    ]);
    const retentionCaption = `${mode === 'nday' ? 'N-day' : 'Unbounded'} retention: ${selectedText(startEvent)}, then ${selectedText(returnEvent)}, started ${days}`;
    retention.show(retentionChart(cohorts, interval), { kind: 'line', valueName: 'Retained users (%)' }, `Line chart: ${retentionCaption}, in percent. ${TABLE_NOTE}`, [
      retentionTable(cohorts, interval, retentionCaption),
    ]);
    return `Charts drawn: ${counted.data.data.xValues.length} periods of users, ${lengths.data.data.xValues.length} session lengths, ${cohorts.dates.length} cohorts.`;
  }

  whenSubmitted(form, results, 'Counting the users, sessions and retention…', draw);

  return {
    start(signedIn, events) {
      client = signedIn;
      fillPicker(startEvent, events);
      fillPicker(returnEvent, events);
      defaultRange('users');
    },
    stop() {
      client = undefined;
      for (const panel of [users, sessions, retention]) panel.clear();
      results.hidden = true;
      form.reset();
    },
  };
}
