// What a module of src/reporting/operations/ is: one reporting operation (its operationId in
// specs/reporting/openapi.yaml) from its decoded parameters to its answer. handlers.ts runs
// every module the same way: parameters, cost, the project's limits, then the answer.
import type { HandlerRequest, OperationId, Reply } from '../../http/operations.js';
import type { EventTypeNames } from '../../model/event-type-names.js';
import type { RunnerContext } from '../runners/context.js';

/** A request the spec lets through but the service cannot answer: 400 with the reason. */
export class BadReportRequest extends Error {}

/** What operations read besides their runner's context. */
export interface OperationEnv {
  /** What the project's tracking plan says of its event types. */
  eventTypeNames(appId: number): Promise<EventTypeNames>;
}

export interface ReportingOperation<K extends OperationId, P> {
  /**
   * The request's parameters as the answer reads them, before the limits admit the request:
   * a BadReportRequest thrown here answers 400 without spending the project's limits.
   */
  parameters(request: HandlerRequest<K>): P;
  /** The request's cost against the project's limits (`queryCost` of shared/reporting-limits.ts). */
  cost(parameters: P): number;
  /** Runs the operation's runner and writes its answer in the operation's shape. */
  answer(ctx: RunnerContext, parameters: P, env: OperationEnv): Promise<Reply<K>>;
}
