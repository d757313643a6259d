// A storage that does not answer (PostgreSQL or ClickHouse restarting, a connection refused
// or cut, the engine's process ended under a request) is a state to wait out, not a defect:
// such a failure is answered with 503 and Retry-After (specs/shared/responses/ServiceUnavailable.yaml),
// and the request can be sent again.

/** Seconds a client is told to wait before sending again a request the storage could not serve. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/**
 * Codes of such failures: Node's for connections (refused, reset, cut, timed out),
 * PostgreSQL's for a server shutting down or starting and for connection failures, the
 * engine's process ended under the call (store/worker/rpc.ts), and a ClickHouse replica that
 * misses parts only replicas that do not answer hold (store/clickhouse/replicas.ts).
 */
const CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTCONN', '57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006', 'SVC_PROCESS_ENDED', 'SVC_REPLICA_BEHIND']);
/**
 * Their messages where no code is set: node-postgres' closed connections, a cut HTTP socket
 * (ClickHouse), and ClickHouse's own codes (its client sets none) for a server it asked in turn
 * that did not answer, a shard under a Distributed table: 32 a connection closed mid-answer,
 * 209 a socket timeout, 210 a network error, 279 every replica of a shard tried.
 */
const MESSAGES = /^(Connection terminated|Client has encountered a connection error|Code: (32|209|210|279)\b)|socket hang up/;

/** Whether `failure` or an error it was caused by (five deep at most) passes `test`. */
export function causedBy(failure: unknown, test: (error: Error & { code?: unknown }) => boolean): boolean {
  for (let error = failure, depth = 0; error instanceof Error && depth < 5; error = error.cause, depth++) if (test(error)) return true;
  return false;
}

/** Whether `failure` (or an error it was caused by) is a storage that did not answer. */
export function isUnavailable(failure: unknown): boolean {
  return causedBy(failure, (error) => (typeof error.code === 'string' && CODES.has(error.code)) || MESSAGES.test(error.message));
}
