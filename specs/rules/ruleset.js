// The project's Spectral ruleset: spectral:oas plus the conventions of this repository.
// Rules named svc-* are ours; each has a case in test/fixtures that makes it fire.
import { readFileSync } from 'node:fs';
import * as oasModule from '@stoplight/spectral-rulesets';
import * as truthyModule from '@stoplight/spectral-functions';
import * as oas3Module from '@stoplight/spectral-formats';
import { parse } from 'yaml';
import operationIdConvention from './functions/operationIdConvention.js';
import operationFileNamedById from './functions/operationFileNamedById.js';
import clientErrorResponse from './functions/clientErrorResponse.js';
import mediaExample from './functions/mediaExample.js';
import versionSegment from './functions/versionSegment.js';
import glossarySpelling from './functions/glossarySpelling.js';
import errorCodeMatchesStatus from './functions/errorCodeMatchesStatus.js';
import localServer from './functions/localServer.js';
import declaredCredentials from './functions/declaredCredentials.js';
import boundedIntegers from './functions/boundedIntegers.js';
import paginationDeclared from './functions/paginationDeclared.js';
import paginationShape from './functions/paginationShape.js';

const { oas } = oasModule;
const { truthy, falsy, enumeration } = truthyModule;
const { oas3 } = oas3Module;
const glossary = parse(readFileSync(new URL('./glossary.yaml', import.meta.url), 'utf8'));
const OPERATIONS = '$.paths[*][get,put,post,delete,patch,options,head]';

/**
 * The ruleset for one kind of document: split `sources` (root documents whose operations,
 * servers and tags are $refs to files, which only a bundler resolves, so the structural
 * `oas3-schema` check is left to the bundles) or `bundles` (self-contained documents).
 */
export function rulesetFor(kind) {
  const sourceOnly = kind === 'sources' ? 'error' : 'off';
  return {
    ...ruleset,
    rules: {
      ...ruleset.rules,
      'oas3-schema': kind === 'sources' ? 'off' : 'error',
      'svc-operation-file-named-by-id': { ...ruleset.rules['svc-operation-file-named-by-id'], severity: sourceOnly },
    },
  };
}

const ruleset = {
  extends: [[oas, 'recommended']],
  formats: [oas3],
  rules: {
    // Operation descriptions are required by svc-operation-description (an error).
    'operation-description': 'off',
    // An open-source project: the documents name no support contact.
    'info-contact': 'off',
    'svc-operation-id-convention': {
      description: 'operationId is <verb><Noun>: get/list for GET, create for POST, update for PUT/PATCH, delete for DELETE.',
      message: '{{error}}',
      severity: 'error',
      given: OPERATIONS,
      then: {
        function: operationIdConvention,
        functionOptions: {
          verbs: { get: ['get', 'list'], post: ['create'], put: ['update'], patch: ['update'], delete: ['delete'] },
        },
      },
    },
    'svc-operation-file-named-by-id': {
      description: 'In a root document every operation is a $ref to a file named after its operationId.',
      message: '{{error}}',
      severity: 'error',
      resolved: false,
      given: OPERATIONS,
      then: { function: operationFileNamedById },
    },
    'svc-operation-summary': {
      description: 'Every operation has a summary.',
      message: '{{error}}',
      severity: 'error',
      given: OPERATIONS,
      then: { field: 'summary', function: truthy },
    },
    'svc-operation-description': {
      description: 'Every operation has a description.',
      message: '{{error}}',
      severity: 'error',
      given: OPERATIONS,
      then: { field: 'description', function: truthy },
    },
    'svc-operation-tags': {
      description: 'Every operation has tags.',
      message: '{{error}}',
      severity: 'error',
      given: OPERATIONS,
      then: { field: 'tags', function: truthy },
    },
    'svc-operation-4xx': {
      description: 'Every operation documents at least one 4xx response.',
      message: '{{error}}',
      severity: 'error',
      given: `${OPERATIONS}.responses`,
      then: { function: clientErrorResponse },
    },
    'svc-operation-security': {
      description: 'Every operation declares security; body-borne keys are declared in x-svc-credentials.',
      message: '{{error}}',
      severity: 'error',
      given: OPERATIONS,
      then: { function: declaredCredentials },
    },
    'svc-http-level-responses': {
      description: 'Every operation documents the answers any request can get before its operation is known: 408 (shared/responses/RequestTimeout.yaml) and 431 (HeadersTooLarge.yaml).',
      message: 'The operation does not document {{property}} (an answer any request can get).',
      severity: 'error',
      given: `${OPERATIONS}.responses`,
      then: [
        { field: '408', function: truthy },
        { field: '431', function: truthy },
      ],
    },
    'svc-request-body-example': {
      description: 'Every request body media type has an example.',
      message: '{{error}}',
      severity: 'error',
      given: `${OPERATIONS}.requestBody.content[*]`,
      then: { function: mediaExample },
    },
    'svc-response-example': {
      description: 'Every response media type has an example.',
      message: '{{error}}',
      severity: 'error',
      given: `${OPERATIONS}.responses[*].content[*]`,
      then: { function: mediaExample },
    },
    'svc-error-code-matches-status': {
      description: 'A JSON body that carries `code` carries the HTTP status of its response.',
      message: '{{error}}',
      severity: 'error',
      given: `${OPERATIONS}.responses[*]`,
      then: { function: errorCodeMatchesStatus },
    },
    'svc-path-version-segment': {
      description: 'Paths carry the documented version segment; only the documented unversioned paths lack one.',
      message: '{{error}}',
      severity: 'error',
      given: '$',
      then: {
        field: 'paths',
        function: versionSegment,
        functionOptions: { unversioned: ['/batch', '/groupidentify', '/attribution', '/usermap', '/', '/identify'] },
      },
    },
    'svc-property-spelling': {
      description: 'Property names are spelled exactly as the interface documents spell them.',
      message: '{{error}}',
      severity: 'error',
      given: '$..properties',
      then: {
        function: glossarySpelling,
        functionOptions: { names: [...glossary.documented, ...glossary.chosen, ...glossary.beyond] },
      },
    },
    'svc-bounded-integer-input': {
      description: 'Integers in parameters and request bodies declare int32/int64, a maximum or an enum, so that none beyond what storage holds gets past validation.',
      message: '{{error}}',
      severity: 'error',
      given: [`${OPERATIONS}.parameters[*].schema`, '$.paths[*].parameters[*].schema', `${OPERATIONS}.requestBody.content[*].schema`],
      then: { function: boundedIntegers },
    },
    'svc-local-servers': {
      description: 'Servers are one variable per host role defaulting to a local address, with host role and region.',
      message: '{{error}}',
      severity: 'error',
      given: ['$.servers[*]', `${OPERATIONS}.servers[*]`],
      then: { function: localServer },
    },
    'svc-idempotent-posts': {
      description: 'x-svc-idempotent marks a POST or PATCH that may be sent again without harm (GET, PUT and DELETE are by HTTP); it is true when given.',
      message: '{{error}}',
      severity: 'error',
      given: '$.paths.*[get,put,delete,head,options,trace]',
      then: { field: 'x-svc-idempotent', function: falsy },
    },
    'svc-idempotent-value': {
      description: 'x-svc-idempotent, where given, is true.',
      message: '{{error}}',
      severity: 'error',
      given: "$.paths.*[post,patch]['x-svc-idempotent']",
      then: { function: enumeration, functionOptions: { values: [true] } },
    },
    'svc-pagination-declared': {
      description: 'Every listing (list<Noun>, or an operation taking page_token or offset) says how it is paged in x-svc-pagination.',
      message: '{{error}}',
      severity: 'error',
      given: OPERATIONS,
      then: { function: paginationDeclared },
    },
    'svc-pagination-shape': {
      description: 'x-svc-pagination is on a GET and names its query parameters and the members of its 200 JSON answer.',
      message: '{{error}}',
      severity: 'error',
      given: OPERATIONS,
      then: { function: paginationShape },
    },
    'svc-host-role': {
      description: 'Each interface group names the host role that serves it.',
      message: '{{error}}',
      severity: 'error',
      given: '$',
      then: { field: 'x-svc-host-role', function: truthy },
    },
    'svc-cors-policy': {
      description: 'Each interface group states which origins browsers may call it from (x-svc-cors.origins: any or configured); the server applies it.',
      message: '{{error}}',
      severity: 'error',
      given: '$',
      then: [
        { field: 'x-svc-cors', function: truthy },
        { field: 'x-svc-cors.origins', function: enumeration, functionOptions: { values: ['any', 'configured'] } },
      ],
    },
  },
};
