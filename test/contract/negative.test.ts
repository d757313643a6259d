// Doc 002's requests the spec forbids, sent to the Prism mock. Where Prism rejects them, the
// test asserts the rejection (status and the spec's error shape); where Prism lets them
// through (a known gap, listed in PRISM_GAPS.md), the test asserts that Prism accepts them,
// so that it notices when Prism changes, and checks the request with the spec-driven
// validator of @svc/openapi-validation (packages/openapi-validation) instead.
import {
  API_KEY,
  BASIC,
  DEPLOYMENT,
  type ForbiddenCase,
  type ValidCase,
  forbiddenRequests,
  form,
  get,
  json,
  query,
  validRequests,
} from './support/mock-requests.js';

const event = { event_type: 'Page Viewed', user_id: 'alice@example.com' };
const identification = { group_type: 'org id', group_value: '10412', group_properties: { plan: 'enterprise' } };
const attribution = { event_type: '[Branch] Install', platform: 'ios', idfa: '8D8AC610-566D-4EF0-9C22-186B2A5ED793' };

const cases: ForbiddenCase[] = [
  {
    name: 'batch event without event_type',
    role: 'ingest',
    request: json('/batch', { api_key: API_KEY, events: [{ user_id: 'alice@example.com' }] }),
    prismStatus: 400,
    problem: /body: .*event_type/,
  },
  {
    name: 'batch of 2001 events',
    role: 'ingest',
    request: json('/batch', { api_key: API_KEY, events: Array.from({ length: 2001 }, () => event) }),
    prismStatus: 400,
    problem: /body: \/events must NOT have more than 2000 items/,
  },
  {
    name: 'batch event with neither user_id nor device_id',
    role: 'ingest',
    request: json('/batch', { api_key: API_KEY, events: [{ event_type: 'Page Viewed' }] }),
    prismStatus: 400,
    problem: /body: \/events\/0 must have required property 'user_id'.*'device_id'.*must match a schema in anyOf/,
  },
  {
    name: 'ingestion request (/2/httpapi) event with neither user_id nor device_id',
    role: 'ingest',
    request: json('/2/httpapi', { api_key: API_KEY, events: [{ event_type: 'Page Viewed' }] }),
    prismStatus: 400,
    problem: /anyOf/,
  },
  {
    name: 'batch without api_key',
    role: 'ingest',
    request: json('/batch', { events: [event] }),
    prismStatus: 400,
    problem: /body: \/ must have required property 'api_key'[\s\S]*x-svc-credentials: body api_key is missing/,
  },
  {
    name: 'ingestion request (/2/httpapi) without api_key',
    role: 'ingest',
    request: json('/2/httpapi', { events: [event] }),
    prismStatus: 400,
    problem: /x-svc-credentials: body api_key is missing/,
  },
  {
    name: 'feedback without Basic auth',
    role: 'app',
    request: json('/api/1/ai-feedback/ingest', { source_id: 'src_7Hq2LmN4', items: [{ unique_id: 'ticket-1', body: 'Hi' }] }),
    prismStatus: 401,
    problem: /credentials: none of the security requirements is met \(BasicAuth\)/,
  },
  {
    name: 'feedback with 101 items',
    role: 'app',
    request: json(
      '/api/1/ai-feedback/ingest',
      { source_id: 'src_7Hq2LmN4', items: Array.from({ length: 101 }, (_, i) => ({ unique_id: `ticket-${i}`, body: 'Hi' })) },
      { authorization: BASIC },
    ),
    prismStatus: 400,
    problem: /body: \/items must NOT have more than 100 items/,
  },
  {
    name: 'vardata without Authorization',
    role: 'experiment',
    request: get(`/v1/vardata?${query({ user_id: 'alice@example.com' })}`),
    prismStatus: 401,
    problem: /credentials: none of the security requirements is met \(DeploymentKey\)/,
  },
  {
    name: 'flags without Authorization',
    role: 'experiment',
    request: get('/v1/flags'),
    prismStatus: 401,
    problem: /credentials: none of the security requirements is met \(DeploymentKey\)/,
  },
  {
    name: 'vardata with X-Svc-Exp-Track: maybe',
    role: 'experiment',
    request: get(`/v1/vardata?${query({ user_id: 'alice@example.com' })}`, { authorization: DEPLOYMENT, 'X-Svc-Exp-Track': 'maybe' }),
    prismStatus: 400,
    problem: /header parameter X-Svc-Exp-Track: \/ must be equal to one of the allowed values/,
  },
  {
    name: 'groupidentify without identification',
    role: 'ingest',
    request: form('/groupidentify', { api_key: API_KEY }),
    prismStatus: 400,
    problem: /form body: \/ must have required property 'identification'/,
  },
  {
    name: 'feedback with an Authorization header that is not Basic base64(key:secret)',
    role: 'app',
    request: json(
      '/api/1/ai-feedback/ingest',
      { source_id: 'src_7Hq2LmN4', items: [{ unique_id: 'ticket-1', body: 'Hi' }] },
      { authorization: 'Basic not-base64-credentials' },
    ),
    prismStatus: 401,
    problem: /credentials: none of the security requirements is met \(BasicAuth\)/,
  },
  // Known gaps: Prism answers 200.
  {
    name: 'vardata with malformed context JSON',
    role: 'experiment',
    request: get(`/v1/vardata?${query({ user_id: 'alice@example.com', context: '{"user_properties": {"plan": "pro"' })}`, {
      authorization: DEPLOYMENT,
    }),
    prismStatus: 200,
    gap: true,
    problem: /query parameter context: is not valid JSON/,
  },
  {
    name: 'vardata with a context that is JSON but not an object',
    role: 'experiment',
    request: get(`/v1/vardata?${query({ user_id: 'alice@example.com', context: '["pro"]' })}`, { authorization: DEPLOYMENT }),
    prismStatus: 200,
    gap: true,
    problem: /query parameter context: \/ must be object/,
  },
  {
    name: "attribution with platform 'windows' (form field event)",
    role: 'ingest',
    request: form('/attribution', { api_key: API_KEY, event: JSON.stringify({ ...attribution, platform: 'windows' }) }),
    prismStatus: 200,
    gap: true,
    problem: /form body: \/event\/platform must be equal to one of the allowed values/,
  },
  {
    name: 'attribution with malformed event JSON (form field)',
    role: 'ingest',
    request: form('/attribution', { api_key: API_KEY, event: '{"event_type": "[Branch] Install", "platform": "ios",' }),
    prismStatus: 200,
    gap: true,
    problem: /form field event: is not valid JSON/,
  },
  {
    name: "attribution with platform 'windows' (query parameter event)",
    role: 'ingest',
    request: { method: 'POST', url: `/attribution?${query({ api_key: API_KEY, event: JSON.stringify({ ...attribution, platform: 'windows' }) })}` },
    prismStatus: 200,
    gap: true,
    problem: /query parameter event: \/platform must be equal to one of the allowed values/,
  },
  {
    name: 'attribution with malformed event JSON (query parameter)',
    role: 'ingest',
    request: { method: 'POST', url: `/attribution?${query({ api_key: API_KEY, event: '{"platform":' })}` },
    prismStatus: 200,
    gap: true,
    problem: /query parameter event: is not valid JSON/,
  },
  {
    name: 'attribution without api_key (neither form nor query)',
    role: 'ingest',
    request: form('/attribution', { event: JSON.stringify(attribution) }),
    prismStatus: 200,
    gap: true,
    problem: /x-svc-credentials: form api_key or query api_key is missing/,
  },
  {
    name: 'groupidentify with malformed identification JSON',
    role: 'ingest',
    request: form('/groupidentify', { api_key: API_KEY, identification: '{"group_type": "org id", "group_value": }' }),
    prismStatus: 200,
    gap: true,
    problem: /form field identification: is not valid JSON/,
  },
  {
    name: 'groupidentify with identification JSON that breaks the schema (no group_properties)',
    role: 'ingest',
    request: form('/groupidentify', { api_key: API_KEY, identification: JSON.stringify({ group_type: 'org id', group_value: '1' }) }),
    prismStatus: 200,
    gap: true,
    problem: /form body: \/identification must have required property 'group_properties'/,
  },
  {
    name: 'groupidentify without api_key (neither form nor query)',
    role: 'ingest',
    request: form('/groupidentify', { identification: JSON.stringify(identification) }),
    prismStatus: 200,
    gap: true,
    problem: /x-svc-credentials: form api_key or query api_key is missing/,
  },
];

forbiddenRequests(cases);

// Controls: the same requests done right are accepted by both Prism and the validator, so
// the rejections above come from the broken part only.
const valid: ValidCase[] = [
  { name: 'batch', role: 'ingest', request: json('/batch', { api_key: API_KEY, events: [event] }), status: 200 },
  { name: 'ingestion request', role: 'ingest', request: json('/2/httpapi', { api_key: API_KEY, events: [event, { event_type: 'x', device_id: 'device-0001' }] }), status: 200 },
  { name: 'groupidentify (form)', role: 'ingest', request: form('/groupidentify', { api_key: API_KEY, identification: JSON.stringify([identification]) }), status: 200 },
  {
    name: 'groupidentify (api_key in query)',
    role: 'ingest',
    request: { ...form('/groupidentify', { identification: JSON.stringify(identification) }), url: `/groupidentify?${query({ api_key: API_KEY })}` },
    status: 200,
  },
  { name: 'attribution (form)', role: 'ingest', request: form('/attribution', { api_key: API_KEY, event: JSON.stringify(attribution) }), status: 200 },
  { name: 'attribution (query)', role: 'ingest', request: { method: 'POST', url: `/attribution?${query({ api_key: API_KEY, event: JSON.stringify(attribution) })}` }, status: 200 },
  {
    name: 'feedback',
    role: 'app',
    request: json('/api/1/ai-feedback/ingest', { source_id: 'src_7Hq2LmN4', items: [{ unique_id: 'ticket-1', body: 'Hi' }] }, { authorization: BASIC }),
    status: 200,
  },
  {
    name: 'vardata',
    role: 'experiment',
    request: get(`/v1/vardata?${query({ user_id: 'alice@example.com', flag_keys: 'checkout-redesign,pricing-page-test', context: JSON.stringify({ user_properties: { plan: 'pro' } }) })}`, {
      authorization: DEPLOYMENT,
      'X-Svc-Exp-Track': 'no-track',
    }),
    status: 200,
  },
  { name: 'flags', role: 'experiment', request: get('/v1/flags?flag_keys=checkout-redesign', { authorization: DEPLOYMENT }), status: 200 },
];

validRequests(valid);
