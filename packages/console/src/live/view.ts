// The live view: the last events the project received, newest first, at most LIMIT of them,
// asked for every few seconds from the Export API while the view is shown and the tab is in
// the foreground (a hidden view or a background tab asks nothing).
import { busy, byId } from '../page.js';
import type { Client } from '../session.js';
import { renderTable } from '../table.js';
import type { View } from '../view.js';
import { exportedEvents, type ExportedEvent } from './export.js';

export const LIMIT = 50;
const HOUR_MS = 3_600_000;

/** The newest `LIMIT` of `known` and `arrived`, each once (by uuid), newest first. */
export function lastEvents(known: readonly ExportedEvent[], arrived: readonly ExportedEvent[]): ExportedEvent[] {
  const byUuid = new Map([...known, ...arrived].map((event) => [event.uuid, event]));
  return [...byUuid.values()].sort((a, b) => b.server_upload_time.localeCompare(a.server_upload_time) || b.uuid.localeCompare(a.uuid)).slice(0, LIMIT);
}

const seconds = (time: string) => time.slice(0, 19);

export function liveView(): View {
  const region = byId('live-events');
  const state = byId('live-state');
  const pause = byId<HTMLButtonElement>('live-pause');
  // The page says how often (5 s); the browser tests shorten it.
  const pollMs = () => Number(byId('live').dataset.pollMs);
  let client: Client | undefined;
  let shown = false;
  let paused = false;
  let events: ExportedEvent[] = [];
  /** The hour the next request starts at: the previous request's, so no event is missed at an hour's turn. */
  let fromMs: number | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let polling = false;

  const active = () => client !== undefined && shown && !paused && document.visibilityState === 'visible';

  function render(): void {
    region.replaceChildren(
      renderTable({
        caption: `The last ${events.length} events received (at most ${LIMIT}), newest first`,
        columns: ['Received (UTC)', 'Event', 'User', 'Device', 'Event time (UTC)'],
        rows: events.map((event) => ({ header: seconds(event.server_upload_time), cells: [event.event_type, event.user_id ?? '—', event.device_id ?? '—', seconds(event.event_time)] })),
      }),
    );
  }

  async function poll(): Promise<string> {
    const now = Date.now();
    const arrived = await exportedEvents(client!, fromMs ?? now - HOUR_MS, now);
    fromMs = now;
    const before = new Set(events.map((event) => event.uuid));
    events = lastEvents(events, arrived);
    render();
    const fresh = events.filter((event) => !before.has(event.uuid)).length;
    state.textContent = `Checked at ${new Date(now).toISOString().slice(11, 19)} UTC: ${fresh} new. Asked again every ${pollMs() / 1000} seconds while this view is open.`;
    return fresh > 0 ? `${fresh} new events.` : '';
  }

  function stopPolling(): void {
    clearTimeout(timer);
    timer = undefined;
  }

  /** Polls now, then every pollMs() while active (one request at a time); a failure is shown and polling goes on. */
  function schedule(): void {
    stopPolling();
    if (!active() || polling) return;
    polling = true;
    void busy(region, '', poll).finally(() => {
      polling = false;
      if (active()) timer = setTimeout(schedule, pollMs());
    });
  }

  pause.addEventListener('click', () => {
    paused = !paused;
    pause.setAttribute('aria-pressed', String(paused));
    if (paused) {
      stopPolling();
      state.textContent = 'Paused: nothing is asked until you resume.';
    } else schedule();
  });
  document.addEventListener('visibilitychange', () => (active() ? schedule() : stopPolling()));

  return {
    start(signedIn) {
      client = signedIn;
    },
    stop() {
      stopPolling();
      client = undefined;
      events = [];
      fromMs = undefined;
      region.replaceChildren();
      state.textContent = '';
    },
    shown(visible) {
      shown = visible;
      if (visible) schedule();
      else stopPolling();
    },
  };
}
