// A user's program run against the installed tarballs (test/packaging/check.mjs): ESM imports
// resolve through the exports maps and the helpers work.
import assert from 'node:assert/strict';
import { exportParts, signWebhook, verifyWebhook } from '@svc/client';
import { murmur3X86_32 } from '@svc/evaluation';

assert.equal(exportParts('20261120T00', '20261121T05').length, 2);
const body = '{"events":[]}';
const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)) };
headers['webhook-signature'] = signWebhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', headers['webhook-id'], Number(headers['webhook-timestamp']), body);
assert.deepEqual(verifyWebhook(body, headers, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'), { events: [] });
assert.equal(typeof murmur3X86_32('svc', 0), 'number');
console.log('the installed packages import and run');
