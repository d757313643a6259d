// The session replays view: the project's recordings, newest first, PAGE_SIZE a page
// (`GET /api/1/session-replays`, following `next_page_token`), each with a button that loads
// it into the player.
import type { SessionReplay } from '@svc/client';
import { formatDuration } from '../format.js';
import { busy, byId } from '../page.js';
import type { Client } from '../session.js';
import type { View } from '../view.js';
import { recordedEvents } from './files.js';
import type { Player } from './player.js';

export const PAGE_SIZE = 10;

const when = (iso: string) => `${iso.slice(0, 19).replace('T', ' ')} UTC`;

export function replaysView(): View {
  const region = byId('replays-list');
  const next = byId<HTMLButtonElement>('replays-next');
  const first = byId<HTMLButtonElement>('replays-first');
  let player: Player | undefined;
  let client: Client | undefined;
  /** The tokens of the pages shown so far; the last one is the next page's. */
  let nextToken: string | null = null;
  let page = 0;

  function row(replay: SessionReplay): HTMLTableRowElement {
    const cells = [when(replay.start_time), formatDuration(Date.parse(replay.end_time) - Date.parse(replay.start_time)), replay.device_id, replay.svc_id === null ? '—' : String(replay.svc_id)];
    const tr = document.createElement('tr');
    const header = document.createElement('th');
    header.scope = 'row';
    header.textContent = replay.session_id;
    tr.append(header, ...cells.map((text) => Object.assign(document.createElement('td'), { textContent: text })));
    const play = Object.assign(document.createElement('button'), { type: 'button', className: 'secondary', textContent: 'Play' });
    play.setAttribute('aria-label', `Play the replay of session ${replay.session_id}`);
    play.addEventListener('click', () => void busy(region, 'Fetching the recording…', () => load(replay.replay_id)));
    const action = document.createElement('td');
    action.append(play);
    tr.append(action);
    return tr;
  }

  async function load(replayId: string): Promise<string> {
    const [events, { replayPlayer }] = await Promise.all([recordedEvents(client!, replayId), import('./player.js')]);
    player ??= replayPlayer();
    player.load(replayId, events);
    byId('replay-toggle').focus();
    return `Recording loaded: ${events.length} events. Press Play.`;
  }

  async function list(token: string | null): Promise<string> {
    const { data } = await client!.GET('/api/1/session-replays', { params: { query: { sort_order: 'desc', page_size: PAGE_SIZE, ...(token ? { page_token: token } : {}) } } });
    page = token ? page + 1 : 1;
    nextToken = data.next_page_token;
    const table = byId<HTMLTableElement>('replays-table');
    table.caption!.textContent = `Session replays, newest first: page ${page}`;
    table.tBodies[0]!.replaceChildren(...data.session_replays.map(row));
    next.disabled = nextToken === null;
    first.disabled = page === 1;
    region.hidden = false;
    return `Page ${page}: ${data.session_replays.length} replays${nextToken ? ', more on the next page' : ''}.`;
  }

  next.addEventListener('click', () => void busy(region, 'Listing the replays…', () => list(nextToken)));
  first.addEventListener('click', () => void busy(region, 'Listing the replays…', () => list(null)));

  return {
    start(signedIn) {
      client = signedIn;
    },
    stop() {
      client = undefined;
      player?.clear();
      byId<HTMLTableElement>('replays-table').tBodies[0]!.replaceChildren();
      region.hidden = true;
      page = 0;
    },
    shown(visible) {
      if (visible && client && page === 0) void busy(region, 'Listing the replays…', () => list(null));
    },
  };
}
