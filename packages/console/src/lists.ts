// The cohorts and annotations view: the project's cohorts (`GET /api/3/cohorts`) and annotations
// (`GET /api/3/annotations`) as two tables, asked for again each time the view is shown.
import type { Annotation, Cohort } from '@svc/client';
import { formatNumber } from './format.js';
import { busy, byId } from './page.js';
import type { Client } from './session.js';
import { renderTable, type TableData } from './table.js';
import type { View } from './view.js';

/** Seconds since 1970 (the cohort listing's times) as `2026-11-18 14:00 UTC`. */
const fromSeconds = (seconds: number) => `${new Date(seconds * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

export function cohortsTable(cohorts: readonly Cohort[]): TableData {
  return {
    caption: `Cohorts: ${formatNumber(cohorts.length)}`,
    columns: ['Cohort', 'Members', 'Description', 'Owners', 'Computed'],
    rows: cohorts.map((cohort) => ({ header: cohort.name, cells: [formatNumber(cohort.size), cohort.description, cohort.owners.join(', '), fromSeconds(cohort.lastComputed)] })),
  };
}

export function annotationsTable(annotations: readonly Annotation[]): TableData {
  return {
    caption: `Annotations: ${formatNumber(annotations.length)}`,
    columns: ['Annotation', 'Start', 'End', 'Category', 'Chart', 'Details'],
    rows: annotations.map((annotation) => ({
      header: annotation.label,
      cells: [annotation.start, annotation.end ?? '—', annotation.category?.name ?? '—', annotation.chart_id ?? 'Every chart', annotation.details ?? ''],
    })),
  };
}

export function listsView(): View {
  const region = byId('lists-tables');
  let client: Client | undefined;

  async function list(): Promise<string> {
    const [cohorts, annotations] = await Promise.all([client!.GET('/api/3/cohorts'), client!.GET('/api/3/annotations')]);
    region.replaceChildren(renderTable(cohortsTable(cohorts.data.cohorts)), renderTable(annotationsTable(annotations.data.data)));
    return `Listed ${cohorts.data.cohorts.length} cohorts and ${annotations.data.data.length} annotations.`;
  }

  return {
    start(signedIn) {
      client = signedIn;
    },
    stop() {
      client = undefined;
      region.replaceChildren();
    },
    shown(visible) {
      if (visible && client) void busy(region, 'Listing the cohorts and annotations…', list);
    },
  };
}
