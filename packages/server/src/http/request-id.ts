// Every answer carries a request id (`X-Request-Id`): the caller's own when it sends a usable one,
// else a UUID made here. Error bodies that are JSON objects carry it as `request_id`, and the
// server's log lines name it, so that a caller's report and the log meet.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

/** Printable ASCII without spaces, at most 128 characters: safe in a header, a log line and JSON. */
const USABLE = /^[\x21-\x7e]{1,128}$/;

/** The request's id: the caller's `X-Request-Id` when usable, else a new UUID. */
export function requestIdOf(request: IncomingMessage): string {
  const sent = request.headers['x-request-id'];
  return typeof sent === 'string' && USABLE.test(sent) ? sent : randomUUID();
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype;

/** The id on every answer of `app`, and in the JSON object body of every error. */
export function answerWithRequestIds(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.addHook('preSerialization', async (request, reply, payload) => {
    if (reply.statusCode >= 400 && isPlainObject(payload)) return { ...payload, request_id: request.id };
    return payload;
  });
}
