// Feedback ingestion: items and conversation parts upserted by unique_id within a
// webhook source of the project. Problems of one item fail that item only (`failed`,
// `errors`); problems of the request as a whole are a 400 with `issues`.
import type { RequestProblem } from '@svc/openapi-validation';
import type { ErrorObject } from 'ajv';
import type { components } from '../generated/feedback.js';
import type { Caller, HandlerRequest, Reply } from '../http/operations.js';
import type { FeedbackStore, FeedbackUpsert } from '../store/types.js';

type Request = components['schemas']['FeedbackIngestRequest'];
type Item = components['schemas']['FeedbackItem'];
type Result = Reply<'createFeedbackItems'>;

/** `/items/<n>/...` errors confined to item n (all but the request-level limit on parts). */
function itemIndex(error: ErrorObject): number | undefined {
  const [, top, index, field] = error.instancePath.split('/');
  if (top !== 'items' || index === undefined || !/^\d+$/.test(index)) return undefined;
  if (field === undefined && error.keyword !== 'required' && error.keyword !== 'additionalProperties') return undefined;
  if (field === 'conversation_parts' && error.keyword === 'maxItems') return undefined;
  if (error.keyword === 'required' && field === undefined && error.params.missingProperty === 'unique_id') return undefined;
  return Number(index);
}

function describe(error: ErrorObject): string {
  const [, , , ...rest] = error.instancePath.split('/');
  const where = rest.length > 0 ? rest.join('.') : String(error.params.missingProperty ?? error.params.additionalProperty ?? 'item');
  return `${where}: ${error.message ?? 'is invalid'}`;
}

export class FeedbackService {
  constructor(private readonly store: FeedbackStore) {}

  private source(caller: Caller, sourceId: string): Result | undefined {
    const source = caller.project!.feedback_sources.find((s) => s.source_id === sourceId);
    if (!source) return { status: 404, body: { code: 404, error: `No feedback source ${sourceId} in this project` } };
    if (source.type !== 'webhook') return { status: 403, body: { code: 403, error: `Feedback source ${sourceId} is not a webhook source` } };
    return undefined;
  }

  /** Stores the valid items, reports the others. */
  private async ingest(caller: Caller, request: Request, failures: Map<number, string>, receivedAt: number): Promise<Result> {
    const refused = this.source(caller, request.source_id);
    if (refused) return refused;
    const appId = caller.project!.app_id;
    const accepted: FeedbackUpsert[] = [];
    for (const [index, item] of request.items.entries()) {
      if (failures.has(index)) continue;
      const hasParts = (item.conversation_parts?.length ?? 0) > 0;
      if (item.body === undefined && !hasParts && !(await this.store.feedbackItem(appId, request.source_id, item.unique_id))) {
        failures.set(index, 'body: required for a new item without conversation parts');
        continue;
      }
      accepted.push(item as Item as FeedbackUpsert);
    }
    await this.store.upsertFeedbackItems(appId, request.source_id, accepted, new Date(receivedAt).toISOString());
    const errors = [...failures].sort(([a], [b]) => a - b).map(([index, error]) => ({ unique_id: String(request.items[index]?.unique_id ?? ''), error }));
    return { status: 200, body: { ingested: accepted.length, failed: errors.length, errors } };
  }

  handle = (request: HandlerRequest<'createFeedbackItems'>): Promise<Result> => this.ingest(request.caller, request.body, new Map(), request.receivedAt);

  /** Item-level schema problems fail their items; anything else is a 400 with `issues`. */
  reject = async (problems: RequestProblem[], body: unknown, caller: Caller | undefined, receivedAt: number): Promise<Result> => {
    const failures = new Map<number, string>();
    const issues: { path: string; message: string }[] = [];
    for (const problem of problems) {
      if (problem.where !== 'body' || !problem.errors) {
        issues.push({ path: '', message: `${problem.where}: ${problem.message}` });
        continue;
      }
      for (const error of problem.errors) {
        const index = itemIndex(error);
        if (index !== undefined) {
          if (!failures.has(index)) failures.set(index, describe(error));
        } else {
          const path = error.keyword === 'required' ? `${error.instancePath}/${String(error.params.missingProperty)}` : error.instancePath;
          issues.push({ path, message: error.keyword === 'required' ? 'is required' : (error.message ?? 'is invalid') });
        }
      }
    }
    if (issues.length > 0 || !caller) return { status: 400, body: { code: 400, error: 'Invalid request body', issues } };
    return this.ingest(caller, body as Request, failures, receivedAt);
  };
}
