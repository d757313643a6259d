// A short session recording in rrweb's format, as the session-replay SDK sends it: the page's
// meta, a full snapshot of a small page (a heading, a text, a button), then a few incremental
// snapshots over three seconds (the mouse moving to the button, a click, the text changing).
// Written by hand, node by node, so that the demo needs no browser to record it.

/** rrweb's event types and incremental sources used here. */
const META = 4;
const FULL_SNAPSHOT = 2;
const INCREMENTAL = 3;
const MUTATION = 0;
const MOUSE_MOVE = 1;
const MOUSE_INTERACTION = 2;
const CLICK = 2;

export const RECORDING_MS = 3000;

const element = (id, tagName, childNodes = [], attributes = {}) => ({ type: 2, id, tagName, attributes, childNodes });
const text = (id, textContent) => ({ type: 3, id, textContent });

/** The events of a recording that starts at `startMs` and lasts RECORDING_MS. */
export function demoRecording(startMs) {
  const page = {
    type: 0,
    id: 1,
    childNodes: [
      { type: 1, id: 2, name: 'html', publicId: '', systemId: '' },
      element(3, 'html', [
        element(4, 'head', [element(5, 'title', [text(6, 'Demo shop')])]),
        element(7, 'body', [
          element(8, 'h1', [text(9, 'Demo shop')]),
          element(10, 'p', [text(11, 'Your cart is empty.')]),
          element(12, 'button', [text(13, 'Add to cart')], { type: 'button' }),
        ]),
      ]),
    ],
  };
  return [
    { type: META, timestamp: startMs, data: { href: 'https://shop.example.com/', width: 800, height: 400 } },
    { type: FULL_SNAPSHOT, timestamp: startMs + 10, data: { node: page, initialOffset: { top: 0, left: 0 } } },
    { type: INCREMENTAL, timestamp: startMs + 1000, data: { source: MOUSE_MOVE, positions: [{ x: 40, y: 150, id: 12, timeOffset: 0 }] } },
    { type: INCREMENTAL, timestamp: startMs + 2000, data: { source: MOUSE_INTERACTION, type: CLICK, id: 12, x: 40, y: 150 } },
    { type: INCREMENTAL, timestamp: startMs + RECORDING_MS, data: { source: MUTATION, texts: [{ id: 11, value: 'One book in your cart.' }], attributes: [], removes: [], adds: [] } },
  ];
}
