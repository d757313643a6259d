// The platform's official Node SDK, pointed at this server through the Prism proxy, sends
// track, identify, group identify and revenue events on /2/httpapi and /batch.
import { Identify, Revenue, createInstance } from '@amplitude/analytics-node';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Harness, startHarness } from './support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness(['ingest']);
});
afterAll(() => h?.close());

for (const [path, useBatch] of [
  ['/2/httpapi', false],
  ['/batch', true],
] as const) {
  test(`track, identify, group identify and revenue through ${path}`, async () => {
    const sdk = createInstance();
    await sdk.init(h.project.api_key, { serverUrl: `${h.proxied.ingest}${path}`, useBatch, flushIntervalMillis: 50, logLevel: 0 }).promise;
    const user = { user_id: `sdk-user${path.replace(/\W/g, '-')}` };
    const results = await Promise.all([
      sdk.track('SDK Button Clicked', { color: 'blue' }, { ...user, insert_id: `sdk-insert${path}` }).promise,
      sdk.identify(new Identify().set('plan', 'pro').add('logins', 2).append('tags', 'sdk'), user).promise,
      sdk.groupIdentify('company', `sdk-co${path}`, new Identify().set('tier', 'gold'), user).promise,
      sdk.revenue(new Revenue().setProductId('sku-1').setPrice(4.5).setQuantity(2).setRevenueType('purchase'), user).promise,
    ]);
    for (const result of results) expect(result.code).toBe(200);
    // The same event again (a retry by the application): deduplicated by insert_id.
    expect((await sdk.track('SDK Button Clicked', { color: 'blue' }, { ...user, insert_id: `sdk-insert${path}` }).promise).code).toBe(200);
    await sdk.flush().promise;

    const events = (await h.server.store.events(h.project.app_id)).filter((e) => e.user_id === user.user_id);
    expect(events.filter((e) => e.event_type === 'SDK Button Clicked')).toHaveLength(1);
    const revenue = events.find((e) => e.event_type === 'revenue_amount')!;
    expect(revenue).toMatchObject({ price: 4.5, quantity: 2, revenue: 9, productId: 'sku-1', revenueType: 'purchase' });
    expect(await h.server.store.userProfile(h.project.app_id, user.user_id)).toEqual({ plan: 'pro', logins: 2, tags: ['sdk'] });
    expect(await h.server.store.groupProfile(h.project.app_id, { group_type: 'company', group_value: `sdk-co${path}` })).toEqual({ tier: 'gold' });
  });
}
