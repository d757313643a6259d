// The console's entry: sign-in, then the views, one at a time as the URL's fragment says
// (#segmentation, #funnel, …).
import 'uplot/dist/uPlot.min.css';
// The replay player's (its script is loaded when a replay is played).
import 'rrweb/dist/style.css';
import './styles.css';
import { funnelView } from './funnel/view.js';
import { listsView } from './lists.js';
import { liveView } from './live/view.js';
import { replaysView } from './replays/view.js';
import { byId } from './page.js';
import { segmentationView } from './segmentation/view.js';
import { startSignIn } from './sign-in.js';
import { usersView } from './users/view.js';

const views = { segmentation: segmentationView(), funnel: funnelView(), users: usersView(), lists: listsView(), live: liveView(), replays: replaysView() };
type ViewName = keyof typeof views;
let signedIn = false;

function viewName(): ViewName {
  const name = location.hash.slice(1);
  return Object.hasOwn(views, name) ? (name as ViewName) : 'segmentation';
}

/** Shows the fragment's view (none when signed out); `focus` moves to its heading, after a link was followed. */
function route(focus: boolean): void {
  byId('nav').hidden = !signedIn;
  for (const name of Object.keys(views) as ViewName[]) {
    const shown = signedIn && name === viewName();
    byId(name).hidden = !shown;
    views[name].shown?.(shown);
    const link = byId('nav').querySelector(`a[href="#${name}"]`)!;
    if (shown) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  if (focus && signedIn) byId(`${viewName()}-title`).focus();
}

startSignIn({
  signedIn(client, events) {
    for (const view of Object.values(views)) view.start(client, events);
    signedIn = true;
    route(true);
  },
  signedOut() {
    for (const view of Object.values(views)) view.stop();
    signedIn = false;
    route(false);
  },
});
addEventListener('hashchange', () => route(true));
