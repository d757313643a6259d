// Code samples of every operation for the HTML docs (`x-codeSamples`, read by Redoc and Scalar):
// curl, the TypeScript client (@svc/client), the Python SDK (svc_sdk) and the Go SDK (svc/sdk).
// Built from the SDK tests' calls (calls.mjs: the specs' examples) so that each sample names the
// operation, its arguments and the credentials the way that client takes them.
import { deref, pascal } from './view.mjs';

const PLACEHOLDER = { api_key: '<API_KEY>', secret_key: '<SECRET_KEY>', deployment_key: '<DEPLOYMENT_KEY>' };
/** The @svc/client factory of each host role and the credentials it takes (packages/client/README.md). */
const TS_FACTORIES = {
  ingest: ['createIngestClient', ['apiKey']],
  app: ['createAppClient', ['apiKey', 'secretKey']],
  experiment: ['createExperimentClient', ['deploymentKey']],
  api: ['createApiClient', ['apiKey']],
};
const TS_PLACEHOLDER = { apiKey: PLACEHOLDER.api_key, secretKey: PLACEHOLDER.secret_key, deploymentKey: PLACEHOLDER.deployment_key };

/** openapi-generator's snake_case of names (as packages/sdk-python/tests/conftest.py). */
const snake = (name) =>
  name
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .replace(/([a-z\d])([A-Z])/g, '$1_$2')
    .replace(/[-.]/g, '_')
    .toLowerCase();
const indent = (text, pad) => text.replace(/\n/g, `\n${pad}`);
const shellQuote = (text) => `'${String(text).replace(/'/g, `'\\''`)}'`;

/** A short list of scalars, written on one line. */
const scalars = (value) => Array.isArray(value) && value.every((v) => v === null || typeof v !== 'object') && JSON.stringify(value).length <= 60;

/** A JSON value as a Python literal. */
function py(value, pad = '') {
  if (value === null) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value !== 'object') return JSON.stringify(value);
  if (scalars(value)) return `[${value.map((v) => py(v)).join(', ')}]`;
  const inner = `${pad}    `;
  const items = Array.isArray(value)
    ? value.map((v) => `${inner}${py(v, inner)}`)
    : Object.entries(value).map(([k, v]) => `${inner}${JSON.stringify(k)}: ${py(v, inner)}`);
  const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  return items.length ? `${open}\n${items.join(',\n')},\n${pad}${close}` : `${open}${close}`;
}

/** A JSON value as a TypeScript literal (unquoted keys where they are identifiers). */
function ts(value, pad = '') {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (scalars(value)) return `[${value.map((v) => ts(v)).join(', ')}]`;
  const inner = `${pad}  `;
  const key = (k) => (/^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k));
  const items = Array.isArray(value)
    ? value.map((v) => `${inner}${ts(v, inner)}`)
    : Object.entries(value).map(([k, v]) => `${inner}${key(k)}: ${ts(v, inner)}`);
  const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  return items.length ? `${open}\n${items.join(',\n')},\n${pad}${close}` : `${open}${close}`;
}

/** A value as a Go literal of the generated builder's argument type (read from the view's schema). */
function go(value, schema, doc) {
  const s = deref(doc, schema) ?? {};
  if (s.type === 'array') return `[]${goType(s.items, doc)}{${value.map((v) => go(v, s.items, doc)).join(', ')}}`;
  if (s.type === 'string' && s.format === 'date-time') {
    const t = new Date(value);
    return `time.Date(${t.getUTCFullYear()}, ${t.getUTCMonth() + 1}, ${t.getUTCDate()}, ${t.getUTCHours()}, ${t.getUTCMinutes()}, ${t.getUTCSeconds()}, 0, time.UTC)`;
  }
  if (s.type === 'string') return typeof value === 'string' && value.includes('"') && !value.includes('`') ? `\`${value}\`` : JSON.stringify(String(value));
  return JSON.stringify(value);
}
function goType(schema, doc) {
  const s = deref(doc, schema) ?? {};
  if (s.type === 'integer') return s.format === 'int64' ? 'int64' : 'int32';
  if (s.type === 'number') return 'float64';
  if (s.type === 'boolean') return 'bool';
  return 'string';
}

function parametersOf(doc, path, method) {
  const item = doc.paths[path];
  return [...(item.parameters ?? []), ...(item[method].parameters ?? [])].map((p) => deref(doc, p));
}

/**
 * What a sample needs of one call: its parameters and form fields with the view's schema and the
 * value a typed client takes (JSON text parsed back into objects), the JSON body without the
 * credentials the clients fill in, and the operation's credentials.
 */
function describe(call, { bundle, view }) {
  const method = call.method.toLowerCase();
  const op = bundle.paths[call.path][method];
  const bundleParams = parametersOf(bundle, call.path, method);
  const viewParams = parametersOf(view, call.path, method);
  const inRequest = (op['x-svc-credentials'] ?? []).filter((c) => c.in === 'body' || c.in === 'form').map((c) => c.name);
  const params = call.params.map((p) => {
    const original = bundleParams.find((b) => b.name === p.name && b.in === p.in);
    const parse = original?.content || original?.['x-svc-json-items'];
    const typed = parse ? (Array.isArray(p.value) ? p.value.map((v) => JSON.parse(v)) : JSON.parse(p.value)) : p.value;
    return { ...p, typed, explode: original?.explode, schema: viewParams.find((v) => v.name === p.name && v.in === p.in)?.schema };
  });
  let fields;
  let body;
  if (call.body?.fields) {
    const viewForm = deref(view, view.paths[call.path][method].requestBody.content[call.body.mediaType].schema);
    const encoding = deref(bundle, op.requestBody).content[call.body.mediaType]?.encoding ?? {};
    fields = call.body.fields
      .filter((f) => !inRequest.includes(f.name))
      .map((f) => ({
        ...f,
        typed: /json/.test(encoding[f.name]?.contentType ?? '') && typeof f.value === 'string' ? JSON.parse(f.value) : f.value,
        explode: encoding[f.name]?.explode,
        schema: viewForm.properties?.[f.name],
      }));
  } else if (call.body) {
    body = { ...call.body, value: structuredClone(call.body.value) };
    if (body.value && typeof body.value === 'object' && !Array.isArray(body.value)) for (const name of inRequest) delete body.value[name];
  }
  const schemes = bundle.components?.securitySchemes ?? {};
  const requirement = (op.security ?? bundle.security ?? []).find((r) => Object.keys(r).length) ?? {};
  return { op, params, fields, body, inRequest, schemes: Object.keys(requirement).map((name) => schemes[name]) };
}

/** The standard-region URL of the operation's host (its own servers first), as apis.json has it. */
function baseUrlOf(call, api) {
  const servers = api.operationServers?.[call.operationId] ?? api.servers;
  return (servers.find((s) => s.region === 'standard') ?? servers[0]).url;
}

/** A placeholder for the key an apiKey scheme or credential names. */
const keyPlaceholder = (name) => (/secret/i.test(name) ? PLACEHOLDER.secret_key : /deployment/i.test(name) ? PLACEHOLDER.deployment_key : PLACEHOLDER.api_key);

/** The wire values of a parameter or form field: a list once per item, or joined when `explode: false`. */
function curlValues({ value, explode }) {
  const text = (v) => (typeof v === 'string' ? v : JSON.stringify(v));
  if (!Array.isArray(value)) return [text(value)];
  return explode === false ? [value.map(text).join(',')] : value.map(text);
}

function curlSample(call, d) {
  const query = new URLSearchParams();
  const lines = [`curl -X ${call.method}`];
  let path = call.path;
  for (const p of d.params) {
    if (p.in === 'path') path = path.replace(`{${p.name}}`, encodeURIComponent(p.value));
    else if (p.in === 'header') lines.push(`-H ${shellQuote(`${p.name}: ${p.value}`)}`);
    else for (const v of curlValues(p)) query.append(p.name, v);
  }
  if (!d.inRequest.length) {
    for (const scheme of d.schemes) {
      if (scheme.type === 'http' && scheme.scheme === 'basic') lines.push(`-u ${shellQuote(`${PLACEHOLDER.api_key}:${PLACEHOLDER.secret_key}`)}`);
      else if (scheme.type === 'http' && scheme.scheme === 'bearer') lines.push(`-H ${shellQuote(`Authorization: Bearer ${PLACEHOLDER.api_key}`)}`);
      // The deployment key goes in Authorization with the `Api-Key` prefix (experiment's DeploymentKey scheme).
      else if (scheme.in === 'header') lines.push(`-H ${shellQuote(`${scheme.name}: Api-Key ${PLACEHOLDER.deployment_key}`)}`);
      else if (scheme.in === 'query') query.append(scheme.name, keyPlaceholder(scheme.name));
    }
  }
  if (d.fields) {
    for (const name of d.inRequest) lines.push(`--data-urlencode ${shellQuote(`${name}=${keyPlaceholder(name)}`)}`);
    for (const f of d.fields) for (const v of curlValues(f)) lines.push(`--data-urlencode ${shellQuote(`${f.name}=${v}`)}`);
  } else if (d.body) {
    const value = typeof d.body.value === 'object' && !Array.isArray(d.body.value) ? { ...Object.fromEntries(d.inRequest.map((n) => [n, keyPlaceholder(n)])), ...d.body.value } : d.body.value;
    lines.push(`-H ${shellQuote(`Content-Type: ${d.body.mediaType}`)}`, `-d ${shellQuote(JSON.stringify(value, null, 2))}`);
  }
  const search = query.toString().replace(/%3C/g, '<').replace(/%3E/g, '>');
  lines.splice(1, 0, shellQuote(`${d.baseUrl}${path}${search ? `?${search}` : ''}`));
  return lines.join(' \\\n  ');
}

function typescriptSample(call, d) {
  const [factory, keys] = TS_FACTORIES[call.hostRole] ?? [];
  if (!factory) throw new Error(`${call.operationId}: no @svc/client factory for host role ${call.hostRole}`);
  const options = Object.fromEntries([...keys.map((k) => [k, TS_PLACEHOLDER[k]]), ['baseUrl', d.baseUrl]]);
  const init = {};
  for (const where of ['path', 'query', 'header']) {
    const list = d.params.filter((p) => p.in === where);
    if (list.length) (init.params ??= {})[where] = Object.fromEntries(list.map((p) => [p.name, p.typed]));
  }
  // The client fills in `api_key` members and fields only (WithoutCredentials); other key fields stay in its types.
  const keyFields = d.inRequest.filter((name) => name !== 'api_key').map((name) => [name, keyPlaceholder(name)]);
  if (d.fields) init.body = Object.fromEntries([...keyFields, ...d.fields.map((f) => [f.name, f.typed])]);
  else if (d.body) init.body = keyFields.length ? { ...Object.fromEntries(keyFields), ...d.body.value } : d.body.value;
  // The client sends the key only where `x-svc-credentials` says; a bearer-only operation gets the header here.
  if (!d.inRequest.length && d.schemes[0]?.scheme === 'bearer') init.headers = { Authorization: `Bearer ${PLACEHOLDER.api_key}` };
  // Binary answers (zip, gzip): the client reads JSON, and text/* answers as text, by itself.
  if (call.response.mediaType && !call.response.mediaType.startsWith('text/')) init.parseAs = 'arrayBuffer';
  const args = [`'${call.path}'`, ...(Object.keys(init).length ? [ts(init)] : [])].join(', ');
  return [
    `import { ${factory} } from '@svc/client';`,
    '',
    `const client = ${factory}(${ts(options).replace(/\n\s*/g, ' ').replace(/, }$/, ' }')});`,
    `const { data, error, response } = await client.${call.method}(${args});`,
    'console.log(response.status, data ?? error);',
  ].join('\n');
}

/** `svc_sdk.connect` / `sdk.Credentials` arguments: what the group's operations take. */
function groupKeys(credentials) {
  if (credentials.authorization === 'basic') return ['api_key', 'secret_key'];
  if (credentials.authorization === 'api-key') return ['deployment_key'];
  return ['api_key'];
}

function pythonSample(call, d, { api, credentials, view }) {
  const module = api.name.replace(/-/g, '_');
  const apiClass = `${pascal(d.op.tags[0])}Api`;
  const json = [...d.params, ...(d.fields ?? [])].some((p) => deref(view, p.schema)?.['x-svc-json-text']);
  const pyValue = (p) => (deref(view, p.schema)?.['x-svc-json-text'] ? `json.dumps(${py(p.typed, '    ')})` : py(p.value, '    '));
  const args = [...d.params, ...(d.fields ?? [])].map((p) => `    ${snake(p.name)}=${pyValue(p)},`);
  if (d.body) args.push(`    body=${py(d.body.value, '    ')},`);
  const connect = groupKeys(credentials).map((k) => `${k}=${JSON.stringify(PLACEHOLDER[k])}`);
  return [
    ...(json ? ['import json', ''] : []),
    'import svc_sdk',
    `from svc_sdk.generated import ${module}`,
    '',
    `client = svc_sdk.connect(${JSON.stringify(api.name)}, base_url=${JSON.stringify(d.baseUrl)}, ${connect.join(', ')})`,
    `result = ${module}.${apiClass}(client).${snake(call.operationId)}(${args.length ? `\n${args.join('\n')}\n` : ''})`,
    'print(result)',
  ].join('\n');
}

// Go keywords: the go generator appends `_` to a parameter of that name (`type` → `Type_`).
const GO_KEYWORDS = new Set('break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var'.split(' '));
const goBuilder = (name) => pascal(name) + (GO_KEYWORDS.has(name) ? '_' : '');

function goSample(call, d, { api, credentials }, view) {
  const pkg = api.name.replace(/-/g, '');
  const service = `${pascal(d.op.tags[0])}Api`;
  const goField = { api_key: 'APIKey', secret_key: 'SecretKey', deployment_key: 'DeploymentKey' };
  const keys = groupKeys(credentials).map((k) => `${goField[k]}: ${JSON.stringify(PLACEHOLDER[k])}`);
  const pathArgs = d.params.filter((p) => p.in === 'path').map((p) => go(p.value, p.schema, view));
  const builders = [...d.params.filter((p) => p.in !== 'path'), ...(d.fields ?? [])].map((p) => `.${goBuilder(p.name)}(${go(p.value, p.schema, view)})`);
  const lines = [];
  if (d.body) {
    lines.push(
      `var body ${d.body.model ? `${pkg}.${d.body.model}` : 'interface{}'}`,
      `if err := json.Unmarshal([]byte(\`${JSON.stringify(d.body.value, null, 2)}\`), &body); err != nil {`,
      '\tpanic(err)',
      '}',
    );
    builders.push('.Body(body)');
  }
  const imports = ['"context"', ...(d.body ? ['"encoding/json"'] : []), '"fmt"', ...(builders.some((b) => b.includes('time.')) ? ['"time"'] : [])];
  return [
    'package main',
    '',
    'import (',
    ...imports.map((i) => `\t${i}`),
    '',
    '\t"svc/sdk"',
    `\t"svc/sdk/generated/${pkg}"`,
    ')',
    '',
    'func main() {',
    `\tcfg := ${pkg}.NewConfiguration()`,
    `\tcfg.Servers = ${pkg}.ServerConfigurations{{URL: ${JSON.stringify(d.baseUrl)}}}`,
    `\tcfg.HTTPClient = sdk.HTTPClient(${JSON.stringify(api.name)}, sdk.Credentials{${keys.join(', ')}})`,
    `\tclient := ${pkg}.NewAPIClient(cfg)`,
    '',
    ...lines.map((l) => `\t${indent(l, '\t')}`),
    `\tresult, _, err := client.${service}.${pascal(call.operationId)}(${['context.Background()', ...pathArgs].join(', ')})${builders.map((b) => `.\n\t\t${b.slice(1)}`).join('')}.\n\t\tExecute()`,
    '\tif err != nil {',
    '\t\tpanic(err)',
    '\t}',
    '\tfmt.Printf("%+v\\n", result)',
    '}',
  ].join('\n');
}

/** `x-codeSamples` of one call: curl, TypeScript, Python, Go. */
export function operationSamples(call, { api, bundle, view, credentials }) {
  const d = { ...describe(call, { bundle, view }), baseUrl: baseUrlOf(call, api) };
  return [
    { lang: 'Shell', label: 'curl', source: curlSample(call, d) },
    { lang: 'TypeScript', label: 'TypeScript (@svc/client)', source: typescriptSample(call, d) },
    { lang: 'Python', label: 'Python (svc_sdk)', source: pythonSample(call, d, { api, credentials, view }) },
    { lang: 'Go', label: 'Go (svc/sdk)', source: goSample(call, d, { api, credentials }, view) },
  ];
}
