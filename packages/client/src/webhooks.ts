/// <reference types="node" />
// Node-only module (node:crypto): the package build otherwise compiles without Node types.
// Webhook deliveries signed as the Standard Webhooks convention says (what the service's event
// streaming sends): `webhook-id` (the same on every attempt of a delivery), `webhook-timestamp`
// (seconds) and `webhook-signature` (`v1,` + base64 HMAC-SHA256 of `id.timestamp.body` keyed by
// the secret's bytes, the base64 after `whsec_`; several space-separated while a secret rotates).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** A delivery whose headers, age or signature do not hold. */
export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

/** Deliveries signed longer ago (or further ahead) than this are refused as replays. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

const PREFIX = 'whsec_';

/** A new signing secret: `whsec_` and the base64 of 24 random bytes. */
export function newWebhookSecret(): string {
  return `${PREFIX}${randomBytes(24).toString('base64')}`;
}

function keyOf(secret: string): Buffer {
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
  if (key.length === 0) throw new WebhookVerificationError('the webhook secret is empty or not base64');
  return key;
}

/** The `webhook-signature` value of a delivery: `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body`. */
export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string | Uint8Array): string {
  const hmac = createHmac('sha256', keyOf(secret)).update(`${id}.${timestampSeconds}.`).update(body);
  return `v1,${hmac.digest('base64')}`;
}

export interface VerifyWebhookOptions {
  /** Seconds a delivery's timestamp may be from now; default 300. */
  toleranceSeconds?: number;
  /** Now, in ms (tests pass a fixed one); default `Date.now`. */
  now?: () => number;
}

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource, name: string): string {
  const value = headers instanceof Headers ? headers.get(name) : Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  const text = Array.isArray(value) ? value.join(' ') : value;
  if (text === undefined || text === null || text === '') throw new WebhookVerificationError(`the delivery has no ${name} header`);
  return text;
}

/**
 * The JSON of a delivery whose signature holds: `body` exactly as received (the raw text or
 * bytes, not re-serialized), its headers (a `Headers` or Node's `IncomingHttpHeaders`) and the
 * destination's secret. Throws `WebhookVerificationError` when a header is missing, the
 * timestamp is more than `toleranceSeconds` from now (a replay), or no signature matches.
 */
export function verifyWebhook<T = unknown>(body: string | Uint8Array, headers: HeaderSource, secret: string, options: VerifyWebhookOptions = {}): T {
  const [id, timestamp, signatures] = [header(headers, 'webhook-id'), header(headers, 'webhook-timestamp'), header(headers, 'webhook-signature')];
  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError(`the webhook-timestamp header is not a number of seconds: ${timestamp}`);
  const tolerance = options.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS;
  const age = (options.now ?? Date.now)() / 1000 - Number(timestamp);
  if (age > tolerance) throw new WebhookVerificationError(`the delivery was signed ${Math.round(age)} s ago, more than ${tolerance} s: refused as a replay`);
  if (age < -tolerance) throw new WebhookVerificationError(`the delivery's timestamp is ${Math.round(-age)} s ahead, more than ${tolerance} s`);
  const expected = Buffer.from(signWebhook(secret, id, Number(timestamp), body).slice('v1,'.length), 'base64');
  const matches = signatures.split(' ').some((signature) => {
    const [version, value] = signature.split(',', 2);
    const given = version === 'v1' && value ? Buffer.from(value, 'base64') : undefined;
    return given !== undefined && given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw new WebhookVerificationError('no webhook-signature matches the body with this secret');
  return JSON.parse(typeof body === 'string' ? body : Buffer.from(body).toString('utf8')) as T;
}
