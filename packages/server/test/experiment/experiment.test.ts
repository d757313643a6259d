// Experiment evaluation against the running server, every answer through Prism.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { flagFile } from '../../src/experiment/handlers.js';
import { type Harness, startHarness } from '../support/harness.js';
import { send } from '../support/http.js';

let h: Harness;
let auth: Record<string, string>;
let mobileAuth: Record<string, string>;
beforeAll(async () => {
  h = await startHarness(['experiment']);
  auth = { authorization: `Api-Key ${h.deployment.key}` };
  mobileAuth = { authorization: `Api-Key ${h.server.tenancy.createDeployment(h.project.app_id, 'mobile').key}` };
  const file = flagFile(h.dataDir, h.project.app_id);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(
    file,
    JSON.stringify([
      { key: 'new-checkout', type: 'experiment', experimentKey: 'exp-1', variants: { treatment: {} }, rules: [{ name: 'Germany', when: [{ property: 'country', op: 'is', values: ['Germany'] }], variant: 'treatment' }], rollout: 0 },
      { key: 'dark-mode', bucketBy: 'user_id', variants: { on: {} } },
      { key: 'mobile-onboarding', variants: { on: {} }, deployments: ['mobile'] },
    ]),
  );
});
afterAll(() => h?.close());

const get = (path: string, headers = auth) => send(`${h.proxied.experiment}${path}`, { headers });

test('/v1/vardata evaluates the deployment flags and records assignment and exposure events', async () => {
  const targeted = await get(`/v1/vardata?user_id=user-exp-1&context=${encodeURIComponent(JSON.stringify({ country: 'Germany' }))}`, { ...auth, 'X-Svc-Exp-Exposure-Track': 'track' });
  expect(targeted.status).toBe(200);
  expect(targeted.body['new-checkout']).toMatchObject({ key: 'treatment', expKey: 'exp-1' });
  expect(targeted.body['dark-mode']).toMatchObject({ key: 'on' });
  const outside = await get('/v1/vardata?user_id=user-exp-2&flag_keys=new-checkout', { ...auth, 'X-Svc-Exp-Track': 'no-track' });
  expect(outside.body).toEqual({});
  const events = (await h.server.store.events(h.project.app_id)).filter((e) => e.event_type.startsWith('[Experiment]'));
  expect(events.map((e) => [e.event_type, e.user_id])).toEqual([
    ['[Experiment] Assignment', 'user-exp-1'],
    ['[Experiment] Exposure', 'user-exp-1'],
    ['[Experiment] Exposure', 'user-exp-1'],
  ]);
});

test('bad context is 400; a missing or unknown deployment key is 401', async () => {
  expect((await get('/v1/vardata?user_id=user-exp-1&context=%7Bnot-json')).status).toBe(400);
  // Prism answers a request without credentials itself: the server's own answer is read directly.
  expect(await send(`${h.direct}/v1/vardata?user_id=user-exp-1`)).toMatchObject({ status: 401, body: { code: 401 } });
  expect((await get('/v1/flags', { authorization: 'Api-Key server-unknown' })).status).toBe(401);
});

test('/v1/flags and the SDK paths answer from the same flags', async () => {
  const flags = await get('/v1/flags?flag_keys=dark-mode');
  expect(flags.body.map((f: { key: string }) => f.key)).toEqual(['dark-mode']);
  const sdkFlags = await get('/sdk/v2/flags');
  expect(sdkFlags.body.map((f: { key: string }) => f.key).sort()).toEqual(['dark-mode', 'new-checkout']);
  const user = Buffer.from(JSON.stringify({ user_id: 'user-exp-3', country: 'Germany' })).toString('base64url');
  const sdk = await get('/sdk/v2/vardata', { ...auth, 'X-Amp-Exp-User': user });
  expect(sdk.body['new-checkout']).toMatchObject({ key: 'treatment' });
});

test('a deployment serves the flags that name it and the flags that name no deployment', async () => {
  const keys = async (path: string, headers: Record<string, string>) => (await get(path, headers)).body.map((f: { key: string }) => f.key).sort();
  expect(await keys('/v1/flags', auth)).toEqual(['dark-mode', 'new-checkout']);
  expect(await keys('/v1/flags', mobileAuth)).toEqual(['dark-mode', 'mobile-onboarding', 'new-checkout']);
  expect(await keys('/sdk/v2/flags', mobileAuth)).toEqual(['dark-mode', 'mobile-onboarding', 'new-checkout']);
  expect(Object.keys((await get('/v1/vardata?user_id=user-exp-4&device_id=device-exp-4', auth)).body).sort()).toEqual(['dark-mode']);
  expect(Object.keys((await get('/v1/vardata?user_id=user-exp-4&device_id=device-exp-4', mobileAuth)).body).sort()).toEqual(['dark-mode', 'mobile-onboarding']);
});

test('/sdk/v2/vardata records exposures when the SDK asks (X-Amp-Exp-Exposure-Track) and no assignment for read-only', async () => {
  const sdkUser = (userId: string) => Buffer.from(JSON.stringify({ user_id: userId })).toString('base64url');
  const tracked = (userId: string) => h.server.store.events(h.project.app_id).then((events) => events.filter((e) => e.user_id === userId).map((e) => e.event_type));
  const variants = await get('/sdk/v2/vardata', { ...auth, 'X-Amp-Exp-User': sdkUser('user-sdk-exposure'), 'X-Amp-Exp-Exposure-Track': 'track' });
  const served = Object.values(variants.body as Record<string, { key?: string }>).filter((variant) => variant.key !== undefined).length;
  expect(served).toBeGreaterThan(0);
  expect(await tracked('user-sdk-exposure')).toEqual(['[Experiment] Assignment', ...Array<string>(served).fill('[Experiment] Exposure')]);
  await get('/sdk/v2/vardata', { ...auth, 'X-Amp-Exp-User': sdkUser('user-sdk-read-only'), 'X-Amp-Exp-Track': 'read-only' });
  await get('/sdk/v2/vardata', { ...auth, 'X-Amp-Exp-User': sdkUser('user-sdk-read-only'), 'X-Amp-Exp-Track': 'no-track', 'X-Amp-Exp-Exposure-Track': 'no-track' });
  expect(await tracked('user-sdk-read-only')).toEqual([]);
});

test('empty items of flag_keys are ignored', async () => {
  const flags = await get('/v1/flags?flag_keys=dark-mode,,');
  expect(flags.status).toBe(200);
  expect(flags.body.map((f: { key: string }) => f.key)).toEqual(['dark-mode']);
  expect(Object.keys((await get('/v1/vardata?user_id=user-exp-5&flag_keys=,dark-mode')).body)).toEqual(['dark-mode']);
});
