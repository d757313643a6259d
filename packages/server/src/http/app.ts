// The HTTP layer: one Fastify route per operation of the bundles (all host roles, or the
// ones asked for), request parsing and validation from the spec, credentials, then the
// typed handler. Bodies are read as text and parsed once, by the spec-driven validator.
import { randomUUID } from 'node:crypto';
import { type IncomingMessage, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { createGunzip } from 'node:zlib';
import type { Transform } from 'node:stream';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyRequest } from 'fastify';
import {
  compileOperation,
  describeProblems,
  isJsonContentType,
  type OperationRef,
  operations,
  parseJson,
  type ParsedJson,
  parseOperationRequest,
  type RequestProblem,
} from '@svc/openapi-validation';
import { CONSOLE_HOST_ROLE, serveConsole } from './console.js';
import { credentialFailure, credentialRule, resolveCaller, type CredentialRule } from './credentials.js';
import type { Caller, Handlers, OperationId, Reply } from './operations.js';
import { yieldToEventLoop } from '../shared/time-slice.js';
import type { Tenancy } from '../shared/tenancy.js';
import { isUnavailable, UNAVAILABLE_RETRY_AFTER_SECONDS } from '../shared/unavailable.js';
import { answerWithRequestIds, requestIdOf } from './request-id.js';
import { tooManyItems } from './too-many-items.js';

/**
 * Turns validation problems into the operation's documented answer (400, 413, or for
 * operations whose problems may be confined to items, a partial success). `caller` is
 * known when the credentials travel in headers.
 */

/** Bytes of a refused body still read before the 413, so that the client reads the answer. */
const MAX_DRAINED_BYTES = 64 * 1024 * 1024;

/**
 * Reads the rest of a body that is refused (discarding it): a connection closed while the
 * client still sends is reset, and the client sees the reset instead of the 413 (a gzip bomb
 * is refused after its first kilobytes). Past `maxBytes` the connection is dropped.
 */
function drainBody(raw: IncomingMessage, maxBytes: number): Promise<void> {
  if (raw.complete || raw.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    let drained = 0;
    raw.unpipe();
    raw.removeAllListeners('data');
    raw.on('data', (chunk: Buffer) => {
      drained += chunk.length;
      if (drained > maxBytes) raw.destroy();
    });
    raw.once('end', resolve);
    raw.once('close', resolve);
    raw.resume();
  });
}

export type Rejection<K extends OperationId> = (problems: RequestProblem[], body: unknown, caller: Caller | undefined, receivedAt: number) => Reply<K> | Promise<Reply<K>>;
export type Rejections = { [K in OperationId]?: Rejection<K> };

/** Timeouts of a listener, ms (slow or stalled clients are cut off). */
export interface ConnectionLimits {
  /** Whole request, headers and body. */
  requestMs: number;
  headersMs: number;
  /** A socket with no traffic. */
  idleMs: number;
  keepAliveMs: number;
  /** How often Node checks the request and headers timeouts. */
  checkIntervalMs: number;
  maxConnections: number;
}

/** CORS policy of an interface group (`x-svc-cors` at the root of its document). */
interface CorsPolicy {
  origins: 'any' | 'configured';
}

declare module 'fastify' {
  interface FastifyContextConfig {
    cors?: CorsPolicy;
  }
}

export interface AppOptions {
  tenancy: Tenancy;
  handlers: Handlers;
  rejections: Rejections;
  /** Host roles whose operations this instance serves; all when absent. */
  hostRoles?: readonly string[];
  /** Request body limits (inflated) per operation, bytes; others get `defaultBodyLimit`. */
  bodyLimits: Partial<Record<OperationId, number>>;
  defaultBodyLimit: number;
  logger?: boolean;
  /** The server's log: every answer of 500 is written to it with its cause. */
  log: (message: string) => void;
  /** Also a line for every 4xx answer: request id, method, path (no query: it may hold keys), status. */
  logClientErrors?: boolean;
  /** Time of receipt of a request, ms (tests move it). */
  clock: () => number;
  connectionLimits: ConnectionLimits;
  /** Origins allowed to call the groups whose CORS policy is `configured`. */
  corsOrigins: readonly string[];
  /** The web console's built files, served with the app host's operations (answered 503 when absent). */
  consoleDir?: string;
}

interface Answer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

const error = (status: number, message: string): Answer => ({ status, body: { code: status, error: message } });

/** Fastify's path syntax for a spec path: `{name}` → `:name`. */
const routePath = (path: string) => path.replace(/\{([^}]+)\}/g, ':$1');

function splitQuery(url: string): URLSearchParams {
  const at = url.indexOf('?');
  return new URLSearchParams(at < 0 ? '' : url.slice(at + 1));
}

function byLocation(params: Map<string, unknown>, location: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of params) if (key.startsWith(`${location}:`)) out[key.slice(location.length + 1)] = value;
  return out;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
/** The parsed body of a request whose body is not UTF-8. */
const NOT_UTF8 = Symbol('not UTF-8');

/** What the typed client reads of an answer: the request id and how long to wait before a retry. */
const EXPOSED_HEADERS = ['X-Request-Id', 'Retry-After'];

/** The value of `Access-Control-Allow-Origin` for a request's origin, if it is allowed. */
function allowedOrigin(policy: CorsPolicy, origin: string, configured: readonly string[]): string | undefined {
  if (policy.origins === 'any') return '*';
  return configured.includes(origin) ? origin : undefined;
}

/** A matcher of concrete paths for a spec path template. */
const templatePattern = (path: string) => new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`);

/** Sockets answered by answerClientError: Node may report the same request again before they close. */
const answeredClientErrors = new WeakSet<Socket>();
/** How long an answered socket may stay open for the client to read the answer and close. */
const CLIENT_ERROR_LINGER_MS = 2_000;

/**
 * Requests Node refuses before any route sees them, answered with the service-wide error body
 * (the specs document 431 on every operation).
 */
function answerClientError(failure: NodeJS.ErrnoException, socket: Socket): void {
  if (failure.code === 'ECONNRESET' || socket.destroyed || answeredClientErrors.has(socket)) return;
  if (!socket.writable) return void socket.destroy(failure);
  const [status, message] =
    failure.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request header fields too large: the request line and headers may take at most 16 KiB']
      : failure.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request timeout: the request was not received in time']
        : [400, 'Bad request: not a valid HTTP request'];
  const requestId = randomUUID();
  const body = JSON.stringify({ code: status, error: message, request_id: requestId });
  answeredClientErrors.add(socket);
  // Ended, not destroyed: a socket closed while the client's bytes still arrive is reset, and
  // the reset can drop the answer before the client reads it (seen under load with a body
  // dripping in). The client closes once it has the answer; one that does not is cut off.
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`);
  setTimeout(() => socket.destroy(), CLIENT_ERROR_LINGER_MS).unref();
}

export function buildApp(options: AppOptions): FastifyInstance {
  const limits = options.connectionLimits;
  const app = Fastify({
    logger: options.logger ?? false,
    // A path parameter may be as long as the request line allows (Node's 16 KiB): Fastify's default of 100 answered 414, which no spec lists.
    routerOptions: { ignoreDuplicateSlashes: true, maxParamLength: 16_384 },
    bodyLimit: options.defaultBodyLimit,
    requestTimeout: limits.requestMs,
    connectionTimeout: limits.idleMs,
    keepAliveTimeout: limits.keepAliveMs,
    http: { headersTimeout: limits.headersMs, connectionsCheckingInterval: limits.checkIntervalMs },
    clientErrorHandler: answerClientError,
    genReqId: requestIdOf,
    requestIdHeader: false,
  });
  answerWithRequestIds(app);
  // The idle limit cuts off clients that stall. While an answer is computed (a question waiting
  // behind a large load, say) the socket is quiet by the server's doing: from the whole request
  // to the answer's first byte there is no idle limit.
  app.addHook('preHandler', async (request) => {
    request.raw.socket?.setTimeout(0);
  });
  app.addHook('onSend', async (request, _reply, payload) => {
    request.raw.socket?.setTimeout(limits.idleMs);
    return payload;
  });

  // Bodies stay text: the validator parses JSON and forms once, as the spec describes them.
  // Text that is not UTF-8 is refused rather than stored with replacement characters.
  app.removeAllContentTypeParsers();
  // Such a body is marked, and answered as the operation answers an invalid body.
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => {
    try {
      done(null, utf8.decode(body as Buffer));
    } catch {
      done(null, NOT_UTF8);
    }
  });

  // Gzip bodies are inflated on the way in; the route's body limit bounds the inflated size.
  app.addHook('preParsing', async (request, _reply, payload) => {
    if ((request.headers['content-encoding'] ?? '').toLowerCase() !== 'gzip') return payload;
    const inflated = createGunzip() as Transform & { receivedEncodedLength?: number };
    inflated.receivedEncodedLength = 0;
    payload.on('data', (chunk: Buffer) => {
      inflated.receivedEncodedLength! += chunk.length;
    });
    payload.on('error', (e) => inflated.destroy(e));
    return payload.pipe(inflated);
  });

  app.setErrorHandler(async (failure: FastifyError, request, reply) => {
    if (failure.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      await drainBody(request.raw, MAX_DRAINED_BYTES);
      return reply.code(413).send({ code: 413, error: 'Payload too large' });
    }
    if (isUnavailable(failure)) {
      options.log(`request ${request.id}: ${request.method} ${request.url} answered 503 (storage unavailable): ${failure.message}`);
      const error = `Service unavailable: its storage did not answer; send the request again in ${UNAVAILABLE_RETRY_AFTER_SECONDS} s`;
      return reply.code(503).header('retry-after', String(UNAVAILABLE_RETRY_AFTER_SECONDS)).send({ code: 503, error });
    }
    const status = failure.statusCode && failure.statusCode >= 400 ? failure.statusCode : 500;
    if (status >= 500) options.log(`request ${request.id}: ${request.method} ${request.url} answered ${status}: ${failure.stack ?? failure.message}`);
    return reply.code(status).send({ code: status, error: status >= 500 ? 'Internal server error' : failure.message });
  });

  if (options.logClientErrors) {
    app.addHook('onResponse', async (request, reply) => {
      if (reply.statusCode >= 400 && reply.statusCode < 500) options.log(`request ${request.id}: ${request.method} ${request.url.split('?')[0]} answered ${reply.statusCode}`);
    });
  }

  // Every answer to a page of an allowed origin, errors included, can be read by it.
  app.addHook('onSend', async (request, reply, payload) => {
    const policy = request.routeOptions.config.cors;
    const origin = request.headers.origin;
    const allowed = policy && origin && allowedOrigin(policy, origin, options.corsOrigins);
    if (allowed) {
      reply.header('access-control-allow-origin', allowed);
      if (allowed !== '*') reply.header('access-control-allow-credentials', 'true').header('vary', 'Origin');
      // Headers a browser page may read besides the safelisted ones (a handler may name more).
      const named = reply.getHeader('access-control-expose-headers');
      reply.header('access-control-expose-headers', [...(named === undefined ? [] : [String(named)]), ...EXPOSED_HEADERS].join(', '));
    }
    return payload;
  });

  const roles = options.hostRoles ? new Set(options.hostRoles) : undefined;
  /** Methods per spec path served here, for preflights and 405 answers. */
  const paths = new Map<string, { methods: string[]; cors: CorsPolicy | undefined; pattern: RegExp }>();
  for (const ref of operations()) {
    if (roles && !roles.has(ref.bundle.hostRole)) continue;
    // Its validators are compiled now, not by its first request, which would hold the event loop.
    compileOperation(ref);
    const rule = credentialRule(ref);
    const cors = ref.bundle.doc['x-svc-cors'] as CorsPolicy | undefined;
    const path = paths.get(ref.path) ?? { methods: [], cors, pattern: templatePattern(ref.path) };
    path.methods.push(ref.method.toUpperCase());
    paths.set(ref.path, path);
    app.route({
      method: ref.method.toUpperCase() as 'GET',
      url: routePath(ref.path),
      config: { cors },
      bodyLimit: options.bodyLimits[ref.op.operationId as OperationId] ?? options.defaultBodyLimit,
      handler: async (request, reply) => {
        const answer = await answerRequest(ref, rule, request, options);
        const body = answer.body as Record<string, unknown> | undefined;
        // JSON bodies that carry `code` carry the HTTP status.
        if (body && typeof body === 'object' && !Array.isArray(body) && 'code' in body) body.code = answer.status;
        return reply.code(answer.status).headers(answer.headers ?? {}).send(body);
      },
    });
  }

  for (const [path, { methods, cors }] of paths) {
    const allow = [...methods, 'OPTIONS'].join(', ');
    app.route({
      method: 'OPTIONS',
      url: routePath(path),
      config: { cors },
      handler: async (request, reply) => {
        const origin = request.headers.origin;
        if (origin === undefined || request.headers['access-control-request-method'] === undefined) return reply.code(204).header('allow', allow).send();
        if (!cors || !allowedOrigin(cors, origin, options.corsOrigins)) return reply.code(403).send({ code: 403, error: `Cross-origin requests from ${origin} are not allowed here` });
        const asked = request.headers['access-control-request-headers'];
        if (asked) reply.header('access-control-allow-headers', asked);
        return reply.code(204).header('access-control-allow-methods', allow).header('access-control-max-age', '86400').send();
      },
    });
  }

  if (!roles || roles.has(CONSOLE_HOST_ROLE)) serveConsole(app, options.consoleDir);

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!.replace(/\/{2,}/g, '/');
    const served = [...paths.values()].find(({ pattern }) => pattern.test(path));
    if (served) {
      const allow = [...served.methods, 'OPTIONS'].join(', ');
      return reply.code(405).header('allow', allow).send({ code: 405, error: `${request.method} is not allowed on ${path}; allowed: ${allow}` });
    }
    return reply.code(404).send({ code: 404, error: `No operation at ${request.method} ${path}` });
  });
  return app;
}

async function answerRequest(ref: OperationRef, rule: CredentialRule, request: FastifyRequest, options: AppOptions): Promise<Answer> {
  const id = ref.op.operationId as OperationId;
  const receivedAt = options.clock();
  const query = splitQuery(request.raw.url ?? '');
  const headers = new Map(Object.entries(request.headers).map(([k, v]) => [k.toLowerCase(), Array.isArray(v) ? v.join(', ') : String(v ?? '')]));

  // Credentials in headers or the query are checked before the body is looked at.
  let caller: Caller | undefined;
  if (!rule.inBody) {
    const check = await resolveCaller(rule, { query, headers, body: undefined }, options.tenancy);
    if ('failure' in check) return credentialFailure(rule, check.failure);
    caller = check.caller;
  }

  if (request.body === NOT_UTF8) return rejected(ref, rule, [{ where: 'body', message: 'The request body is not valid UTF-8' }], undefined, caller, receivedAt, options);
  const rawBody = typeof request.body === 'string' ? request.body : undefined;
  // A JSON body is parsed on a turn of the event loop of its own and
  // validated on the next, not in the turn that read its last bytes along with other requests.
  let json: ParsedJson | undefined;
  if (rawBody !== undefined) {
    await yieldToEventLoop();
    if (isJsonContentType(headers.get('content-type') ?? '')) {
      json = parseJson(rawBody);
      await yieldToEventLoop();
    }
  }
  const parsed = parseOperationRequest(ref, { query, headers, pathParams: request.params as Record<string, string>, body: rawBody, json });
  const problems = parsed.problems.filter((p) => !(p.where === 'credentials' && caller));
  if (problems.length > 0) return rejected(ref, rule, problems, parsed.body, caller, receivedAt, options);
  if (!caller) {
    const check = await resolveCaller(rule, { query, headers, body: parsed.body }, options.tenancy);
    if ('failure' in check) return credentialFailure(rule, check.failure);
    caller = check.caller;
  }

  const handler = options.handlers[id] as (r: unknown) => Promise<Answer> | Answer;
  return handler({
    operationId: id,
    body: parsed.body,
    query: byLocation(parsed.params, 'query'),
    headers: byLocation(parsed.params, 'header'),
    path: byLocation(parsed.params, 'path'),
    caller,
    receivedAt,
    payloadBytes: rawBody === undefined ? 0 : Buffer.byteLength(rawBody),
    bodyText: rawBody,
    remoteAddress: request.ip,
    origin: `${request.protocol}://${request.host}`,
  });
}

/** The answer to a request with problems: the operation's own rejection, else 401, 413 or 400. */
function rejected(ref: OperationRef, rule: CredentialRule, problems: RequestProblem[], body: unknown, caller: Caller | undefined, receivedAt: number, options: AppOptions): Promise<Answer> | Answer {
  const id = ref.op.operationId as OperationId;
  const reject = options.rejections[id] as Rejection<typeof id> | undefined;
  if (reject) return reject(problems, body, caller, receivedAt);
  // Missing credentials are answered as such before anything else is judged.
  if (problems.some((p) => p.where === 'credentials')) return credentialFailure(rule, 'missing');
  const tooMany = tooManyItems(problems);
  if (tooMany && (ref.op.responses as Record<string, unknown>)['413']) return error(413, `Payload too large: at most ${tooMany.limit} items in ${tooMany.path}`);
  return error(400, `Invalid request: ${describeProblems({ valid: false, operation: id, problems })}`);
}
