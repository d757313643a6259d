import { describe, expectTypeOf, it } from 'vitest';
import { verifyWebhook } from '../src/index.js';

describe('verifyWebhook', () => {
  it('types the verified JSON as asked, and takes Headers or Node header objects', () => {
    expectTypeOf(verifyWebhook<{ events: object[] }>('{}', new Headers(), 'whsec_x')).toEqualTypeOf<{ events: object[] }>();
    verifyWebhook('{}', { 'webhook-id': ['a'], 'webhook-timestamp': undefined }, 'whsec_x');
    // @ts-expect-error the body is the raw text or bytes, not parsed JSON
    verifyWebhook({ events: [] }, new Headers(), 'whsec_x');
    // @ts-expect-error the tolerance is a number of seconds
    verifyWebhook('{}', new Headers(), 'whsec_x', { toleranceSeconds: '300' });
  });
});
