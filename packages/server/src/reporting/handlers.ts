// Handlers of the reporting group: the table of its operations (one module each under
// operations/) and what every operation shares: the dialect of the project's engine, the
// runners' context, the project's limits, and the answers to what the query model refuses.
import type { Handler, HandlerRequest, OperationId, Reply } from '../http/operations.js';
import type { components } from '../generated/reporting.js';
import type { ReportingSource } from '../store/types.js';
import type { EventTypeNames } from '../model/event-type-names.js';
import type { ChartOperation, SavedChart } from './charts.js';
import { FormulaError } from './formula.js';
import { type ExceededLimit, type ReportingLimits } from '../shared/reporting-limits.js';
import { ClickHouseDialect, refusalOf } from '../store/clickhouse/dialect.js';
import type { Dialect } from '../store/dialect.js';
import { DuckDbDialect } from '../store/duckdb/dialect.js';
import { UnknownProperty } from '../model/query.js';
import type { RunnerContext } from './runners/context.js';
import { SegmentationError } from './runners/segmentation.js';
import { BadReportRequest, type OperationEnv, type ReportingOperation } from './operations/operation.js';
import type { ChartEnv } from './operations/saved-chart.js';
import { getAverageSessionLength } from './operations/getAverageSessionLength.js';
import { getAverageSessionsPerUser } from './operations/getAverageSessionsPerUser.js';
import { getChartCsv } from './operations/getChartCsv.js';
import { getChartResults } from './operations/getChartResults.js';
import { getEventSegmentation } from './operations/getEventSegmentation.js';
import { getFunnel } from './operations/getFunnel.js';
import { getRealtimeActiveUsers } from './operations/getRealtimeActiveUsers.js';
import { getRetention } from './operations/getRetention.js';
import { getRevenueLtv } from './operations/getRevenueLtv.js';
import { getSessionLengthDistribution } from './operations/getSessionLengthDistribution.js';
import { getUserActivity } from './operations/getUserActivity.js';
import { getUserComposition } from './operations/getUserComposition.js';
import { getUserCounts } from './operations/getUserCounts.js';
import { getUserSearch } from './operations/getUserSearch.js';
import { listEventTypeTotals } from './operations/listEventTypeTotals.js';

type Schemas = components['schemas'];
type LimitReply = { status: 429; body: Schemas['ReportingLimitError']; headers: Record<string, string> };
type BadReply = { status: 400; body: { code: number; error: string } };

/** The dialect a project's reporting queries are written in (the engine's). */
export type DialectOf = (appId: number) => Promise<Dialect>;

/** The DuckDB dialect of a project: event properties a query reads from the JSON are noted for materialization. */
export const duckDbDialectOf =
  (source: ReportingSource): DialectOf =>
  async (appId) => {
    const [options] = await source.query(DuckDbDialect.optionsQuery(appId));
    const columns = options!.columns as { name: string; column_name: string }[];
    return new DuckDbDialect({
      userMappings: options!.mapped === true,
      propertyColumns: new Map(columns.map((c) => [c.name, c.column_name])),
      // In the background: the query reads the JSON meanwhile.
      readFromJson: (name) => void source.materializeEventProperties([name]).catch(() => undefined),
    });
  };

export const clickHouseDialectOf =
  (source: ReportingSource): DialectOf =>
  async (appId) => {
    const [mappings] = await source.query(ClickHouseDialect.userMappingsQuery(appId));
    return new ClickHouseDialect({ userMappings: Number(mappings?.mapped) === 1 });
  };

export class ReportingHandlers {
  private readonly env: OperationEnv;

  constructor(
    private readonly source: ReportingSource,
    private readonly limits: ReportingLimits,
    /** The saved charts of a project. */
    private readonly charts: (appId: number) => SavedChart[],
    /** What the project's tracking plan says of its event types. */
    eventTypeNames: (appId: number) => Promise<EventTypeNames>,
    private readonly dialectOf: DialectOf = duckDbDialectOf(source),
  ) {
    this.env = { eventTypeNames };
  }

  // The operations of specs/reporting/openapi.yaml, each answered by its module.
  readonly getUserCounts: Handler<'getUserCounts'> = this.serve(getUserCounts);
  readonly getSessionLengthDistribution: Handler<'getSessionLengthDistribution'> = this.serve(getSessionLengthDistribution);
  readonly getAverageSessionLength: Handler<'getAverageSessionLength'> = this.serve(getAverageSessionLength);
  readonly getAverageSessionsPerUser: Handler<'getAverageSessionsPerUser'> = this.serve(getAverageSessionsPerUser);
  readonly getUserComposition: Handler<'getUserComposition'> = this.serve(getUserComposition);
  // Its spec documents no 400: what the query model refuses is not caught (it refuses nothing here).
  readonly listEventTypeTotals: Handler<'listEventTypeTotals'> = this.serveLimited(listEventTypeTotals);
  readonly getEventSegmentation: Handler<'getEventSegmentation'> = this.serve(getEventSegmentation);
  readonly getFunnel: Handler<'getFunnel'> = this.serve(getFunnel);
  readonly getRetention: Handler<'getRetention'> = this.serve(getRetention);
  readonly getRealtimeActiveUsers: Handler<'getRealtimeActiveUsers'> = this.serve(getRealtimeActiveUsers);
  readonly getRevenueLtv: Handler<'getRevenueLtv'> = this.serve(getRevenueLtv);
  readonly getUserSearch: Handler<'getUserSearch'> = this.serve(getUserSearch);
  readonly getUserActivity: Handler<'getUserActivity'> = this.serve(getUserActivity);
  /** Saved charts are answered by their operations' handlers (limits and 400s included). */
  private readonly chartEnv: ChartEnv = { charts: (appId) => this.charts(appId), answer: (operation, inner) => (this[operation] as (request: HandlerRequest<ChartOperation>) => Promise<Reply<ChartOperation>>)(inner) };
  readonly getChartCsv: Handler<'getChartCsv'> = (request) => getChartCsv(request, this.chartEnv);
  readonly getChartResults: Handler<'getChartResults'> = (request) => getChartResults(request, this.chartEnv);

  /** An operation's handler: its parameters (a BadReportRequest there is a 400), its cost, then its answer within the limits. */
  private serve<K extends OperationId, P>(operation: ReportingOperation<K, P>): (request: HandlerRequest<K>) => Promise<Reply<K> | LimitReply | BadReply> {
    return async (request) => {
      let parameters: P;
      try {
        parameters = operation.parameters(request);
      } catch (error) {
        if (error instanceof BadReportRequest) return badReply(error.message);
        throw error;
      }
      return this.checked(request, operation.cost(parameters), (ctx) => operation.answer(ctx, parameters, this.env));
    };
  }

  /** `serve` for an operation that answers no 400. */
  private serveLimited<K extends OperationId, P>(operation: ReportingOperation<K, P>): (request: HandlerRequest<K>) => Promise<Reply<K> | LimitReply> {
    return async (request) => {
      const parameters = operation.parameters(request);
      return this.limited(request, operation.cost(parameters), (ctx) => operation.answer(ctx, parameters, this.env));
    };
  }

  private async context(request: HandlerRequest<OperationId>): Promise<RunnerContext> {
    const project = request.caller.project!;
    const timeZone = project.time_zone ?? 'UTC';
    return {
      appId: project.app_id,
      timeZone,
      dialect: await this.dialectOf(project.app_id),
      query: (sql) => this.source.query(sql),
      queryChunks: (sql) => this.source.queryChunks(sql),
      timelineFunnel: (query) => this.source.timelineFunnel(query),
      timelineCounts: (query) => this.source.timelineCounts(query),
      now: () => request.receivedAt,
    };
  }

  /** Runs `work` within the project's limits; 429 when one refuses. */
  private async limited<R>(request: HandlerRequest<OperationId>, cost: number, work: (ctx: RunnerContext) => Promise<R>): Promise<R | LimitReply> {
    const admission = await this.limits.admit(request.caller.project!.app_id, cost, request.receivedAt);
    if ('exceeded' in admission) return limitReply(admission.exceeded, admission.message, admission.retryAfterSeconds);
    try {
      return await work(await this.context(request));
    } finally {
      admission.release();
    }
  }

  /** `limited`, with what the query model and runners refuse answered with 400. */
  private async checked<R>(request: HandlerRequest<OperationId>, cost: number, work: (ctx: RunnerContext) => Promise<R>): Promise<R | LimitReply | BadReply> {
    try {
      return await this.limited(request, cost, work);
    } catch (error) {
      if (error instanceof BadReportRequest || error instanceof UnknownProperty || error instanceof SegmentationError || error instanceof FormulaError) return badReply(error.message);
      const refusal = refusalOf(error);
      if (refusal !== undefined) return badReply(`Not supported on the ClickHouse engine: ${refusal}`);
      throw error;
    }
  }
}

const badReply = (error: string): BadReply => ({ status: 400, body: { code: 400, error } });

function limitReply(exceeded: ExceededLimit, message: string, retryAfterSeconds: number): LimitReply {
  return { status: 429, body: { code: 429, error: message, exceeded_limit: exceeded }, headers: { 'retry-after': String(retryAfterSeconds) } };
}
