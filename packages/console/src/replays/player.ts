// The replay player: a recording played by rrweb's own Replayer, with play/pause, the time
// played and the end announced. Loaded only when a replay is played (rrweb is most of the
// console's script); its style sheet is in the page's (main.ts).
import { Replayer, type eventWithTime } from 'rrweb';
import { announce, byId } from '../page.js';

/** `m:ss` of a time in milliseconds. */
export const clock = (ms: number) => `${Math.floor(ms / 60_000)}:${String(Math.floor((ms % 60_000) / 1000)).padStart(2, '0')}`;

export interface Player {
  load(replayId: string, events: eventWithTime[]): void;
  clear(): void;
}

export function replayPlayer(): Player {
  const section = byId('replay-player');
  const stage = byId('replay-stage');
  const toggle = byId<HTMLButtonElement>('replay-toggle');
  const time = byId('replay-time');
  const progress = byId<HTMLProgressElement>('replay-progress');
  let replayer: Replayer | undefined;
  let playing = false;
  let ticker: ReturnType<typeof setInterval> | undefined;

  function showTime(): void {
    if (!replayer) return;
    const total = replayer.getMetaData().totalTime;
    const played = Math.max(0, Math.min(replayer.getCurrentTime(), total));
    time.textContent = `${clock(played)} / ${clock(total)}`;
    time.dataset.playedMs = String(Math.round(played));
    progress.max = total;
    progress.value = played;
  }

  function setPlaying(now: boolean): void {
    playing = now;
    toggle.textContent = now ? 'Pause' : 'Play';
    clearInterval(ticker);
    ticker = now ? setInterval(showTime, 250) : undefined;
    showTime();
  }

  toggle.addEventListener('click', () => {
    if (!replayer) return;
    if (playing) replayer.pause();
    else {
      // Before the first play (rrweb's time is then meaningless) and at the end, Play starts from the beginning.
      const at = replayer.getCurrentTime();
      replayer.play(at > 0 && at < replayer.getMetaData().totalTime ? at : 0);
    }
    setPlaying(!playing);
  });

  return {
    load(replayId, events) {
      this.clear();
      section.hidden = false;
      byId('replay-title').textContent = `Replay ${replayId}`;
      replayer = new Replayer(events, { root: stage, mouseTail: false, showWarning: false });
      // The recording is shown, not interacted with: its page cannot take the keyboard's focus.
      replayer.iframe.setAttribute('tabindex', '-1');
      replayer.iframe.setAttribute('title', `Recorded page of replay ${replayId}`);
      replayer.on('finish', () => {
        setPlaying(false);
        progress.value = progress.max;
        time.dataset.finished = 'true';
        announce('The replay has played to its end.');
      });
      delete time.dataset.finished;
      setPlaying(false);
    },
    clear() {
      setPlaying(false);
      replayer?.destroy();
      replayer = undefined;
      stage.replaceChildren();
      time.textContent = '';
      section.hidden = true;
    },
  };
}
