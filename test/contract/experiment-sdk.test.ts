// The official SDKs' compatibility endpoints of the experiment group (GET /sdk/v2/vardata,
// GET /sdk/v2/flags): requests the spec forbids, and valid controls, against the Prism mock.
import { DEPLOYMENT, type ForbiddenCase, type ValidCase, forbiddenRequests, get, validRequests } from './support/mock-requests.js';

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const user = base64url({ user_id: 'alice@example.com', device_id: 'd-alice', user_properties: { plan: 'pro' } });

const cases: ForbiddenCase[] = [
  {
    name: 'SDK vardata without Authorization',
    role: 'experiment',
    request: get('/sdk/v2/vardata', { 'X-Amp-Exp-User': user }),
    prismStatus: 401,
    problem: /credentials: none of the security requirements is met \(DeploymentKey\)/,
  },
  {
    name: 'SDK vardata without X-Amp-Exp-User',
    role: 'experiment',
    request: get('/sdk/v2/vardata', { authorization: DEPLOYMENT }),
    prismStatus: 400,
    problem: /header parameter X-Amp-Exp-User: is required/,
  },
  {
    name: 'SDK vardata with a user header that is not base64url',
    role: 'experiment',
    request: get('/sdk/v2/vardata', { authorization: DEPLOYMENT, 'X-Amp-Exp-User': '{"user_id":"alice"}' }),
    prismStatus: 400,
    problem: /header parameter X-Amp-Exp-User: \/ must match pattern/,
  },
  {
    name: 'SDK vardata with X-Amp-Exp-Track: maybe',
    role: 'experiment',
    request: get('/sdk/v2/vardata', { authorization: DEPLOYMENT, 'X-Amp-Exp-User': user, 'X-Amp-Exp-Track': 'maybe' }),
    prismStatus: 400,
    problem: /header parameter X-Amp-Exp-Track: \/ must be equal to one of the allowed values/,
  },
  {
    name: 'SDK flags without Authorization',
    role: 'experiment',
    request: get('/sdk/v2/flags'),
    prismStatus: 401,
    problem: /credentials: none of the security requirements is met \(DeploymentKey\)/,
  },
];

forbiddenRequests(cases);

const valid: ValidCase[] = [
  {
    name: 'SDK vardata',
    role: 'experiment',
    request: get('/sdk/v2/vardata', {
      authorization: DEPLOYMENT,
      'X-Amp-Exp-User': user,
      'X-Amp-Exp-Flag-Keys': base64url(['checkout-redesign']),
      'X-Amp-Exp-Track': 'read-only',
    }),
    status: 200,
  },
  { name: 'SDK flags', role: 'experiment', request: get('/sdk/v2/flags', { authorization: DEPLOYMENT }), status: 200 },
];

validRequests(valid);
