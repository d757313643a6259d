// Standard Webhooks signing and verification: the published test vector, replays, tampering,
// rotation (several signatures), headers as Headers or as Node's header object.
import { describe, expect, it } from 'vitest';
import { newWebhookSecret, signWebhook, verifyWebhook, WebhookVerificationError } from '../src/index.js';

// The Standard Webhooks specification's test vector.
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
const TIMESTAMP = 1614265330;
const BODY = '{"test": 2432232314}';
const SIGNATURE = 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=';
const at = (seconds: number) => () => seconds * 1000;
const headers = (overrides: Record<string, string> = {}) => ({ 'webhook-id': ID, 'webhook-timestamp': String(TIMESTAMP), 'webhook-signature': SIGNATURE, ...overrides });

describe('signWebhook', () => {
  it('reproduces the specification test vector, with or without the whsec_ prefix', () => {
    expect(signWebhook(SECRET, ID, TIMESTAMP, BODY)).toBe(SIGNATURE);
    expect(signWebhook(SECRET.slice('whsec_'.length), ID, TIMESTAMP, new TextEncoder().encode(BODY))).toBe(SIGNATURE);
  });

  it('makes secrets of 24 random bytes', () => {
    const [a, b] = [newWebhookSecret(), newWebhookSecret()];
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(a).not.toBe(b);
  });
});

describe('verifyWebhook', () => {
  it('returns the JSON of a delivery whose signature holds', () => {
    expect(verifyWebhook(BODY, headers(), SECRET, { now: at(TIMESTAMP + 10) })).toEqual({ test: 2432232314 });
    expect(verifyWebhook(Buffer.from(BODY), new Headers(headers()), SECRET, { now: at(TIMESTAMP - 10) })).toEqual({ test: 2432232314 });
  });

  it('accepts any of several signatures (a secret being rotated)', () => {
    const rotated = headers({ 'webhook-signature': `v1,bm9wZQ== ${SIGNATURE}` });
    expect(verifyWebhook(BODY, rotated, SECRET, { now: at(TIMESTAMP) })).toEqual({ test: 2432232314 });
  });

  it.each([
    ['a changed body', '{"test": 2432232315}', headers(), SECRET, /no webhook-signature matches/],
    ['another secret', BODY, headers(), newWebhookSecret(), /no webhook-signature matches/],
    ['another id', BODY, headers({ 'webhook-id': 'msg_other' }), SECRET, /no webhook-signature matches/],
    ['another timestamp', BODY, headers({ 'webhook-timestamp': String(TIMESTAMP + 1) }), SECRET, /no webhook-signature matches/],
    ['an unknown signature version', BODY, headers({ 'webhook-signature': SIGNATURE.replace('v1,', 'v2,') }), SECRET, /no webhook-signature matches/],
    ['no signature header', BODY, { 'webhook-id': ID, 'webhook-timestamp': String(TIMESTAMP) }, SECRET, /no webhook-signature header/],
    ['a timestamp that is not seconds', BODY, headers({ 'webhook-timestamp': '2021-02-25' }), SECRET, /not a number of seconds/],
  ])('refuses %s', (_name, body, given, secret, message) => {
    expect(() => verifyWebhook(body, given, secret, { now: at(TIMESTAMP) })).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(body, given, secret, { now: at(TIMESTAMP) })).toThrow(message);
  });

  it('refuses replays older than five minutes, and timestamps as far ahead', () => {
    expect(verifyWebhook(BODY, headers(), SECRET, { now: at(TIMESTAMP + 300) })).toBeDefined();
    expect(() => verifyWebhook(BODY, headers(), SECRET, { now: at(TIMESTAMP + 301) })).toThrow(/signed 301 s ago, more than 300 s: refused as a replay/);
    expect(() => verifyWebhook(BODY, headers(), SECRET, { now: at(TIMESTAMP - 301) })).toThrow(/301 s ahead/);
    expect(verifyWebhook(BODY, headers(), SECRET, { now: at(TIMESTAMP + 3600), toleranceSeconds: 3600 })).toBeDefined();
  });
});
