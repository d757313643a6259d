// `npm run screenshot -w @svc/console`: docs/console.png, the segmentation chart of the demo
// events, for the README. Needs the console and the server built (`npm run build`).
import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { drawSegmentation, openBrowser, signIn } from './browser.mjs';
import { startDemoServer } from './demo-server.mjs';

const output = fileURLToPath(new URL('../../../docs/console.png', import.meta.url));
const demo = await startDemoServer();
const { browser, context } = await openBrowser();
try {
  const page = await context.newPage();
  await page.goto(demo.consoleUrl);
  await signIn(page, demo.keys);
  await drawSegmentation(page, { event: 'Product Viewed', groupBy: { owner: 'user', name: 'platform' }, kind: 'bars' });
  // The form and the chart, small enough for the README (under 150 KB).
  await page.screenshot({ path: output, clip: { x: 0, y: 0, width: 1200, height: 780 } });
  const kilobytes = Math.round(statSync(output).size / 1000);
  if (kilobytes >= 150) throw new Error(`${output} is ${kilobytes} KB: keep it under 150 KB (a smaller clip)`);
  console.log(`wrote ${output} (${kilobytes} KB)`);
} finally {
  await browser.close();
  await demo.close();
}
