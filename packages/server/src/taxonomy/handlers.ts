// Handlers of the taxonomy group: every request needs the project's taxonomy entitlement
// (403 without; `svc-server admin grant-taxonomy`) and passes the taxonomy limits (429).
// Served so far: event categories.
import type { RequestProblem } from '@svc/openapi-validation';
import { describeProblems } from '@svc/openapi-validation';
import type { components } from '../generated/taxonomy.js';
import type { HandlerRequest, OperationId, Reply } from '../handlers.js';
import type { TaxonomyLimits } from './limits.js';
import { taxonomyCost } from './limits.js';
import type { TaxonomyStore } from './store.js';

type TaxonomyError = components['schemas']['TaxonomyError'];
type CategoryOperation = 'createEventCategory' | 'listEventCategories' | 'getEventCategory' | 'updateEventCategory' | 'deleteEventCategory';
type Refusal = { status: 403; body: TaxonomyError } | { status: 429; body: TaxonomyError; headers: Record<string, string> };

const failure = (message: string): TaxonomyError => ({ success: false, errors: [{ message }] });
const done = { status: 200 as const, body: { success: true as const } };

/** A taxonomy request that breaks the spec: 400 with the taxonomy error body. */
export function rejectTaxonomyRequest(operation: OperationId) {
  return (problems: RequestProblem[]) => ({ status: 400 as const, body: failure(`Invalid request: ${describeProblems({ valid: false, operation, problems })}`) });
}

export class TaxonomyHandlers {
  constructor(
    private readonly store: TaxonomyStore,
    private readonly limits: TaxonomyLimits,
  ) {}

  /** Runs `work` for an entitled project within the limits, or answers why not. */
  private async gated<R>(request: HandlerRequest<CategoryOperation>, method: 'get' | 'post' | 'put' | 'delete', work: (appId: number) => Promise<R>): Promise<R | Refusal> {
    const project = request.caller.project!;
    if (!project.taxonomy) return { status: 403, body: failure('Taxonomy is available to Enterprise projects only') };
    const admission = this.limits.admit(project.app_id, taxonomyCost(method), request.receivedAt);
    if ('message' in admission) return { status: 429, body: failure(admission.message), headers: { 'retry-after': String(admission.retryAfterSeconds) } };
    try {
      return await work(project.app_id);
    } finally {
      admission.release();
    }
  }

  createEventCategory = (request: HandlerRequest<'createEventCategory'>): Promise<Reply<'createEventCategory'>> =>
    this.gated(request, 'post', async (appId) => {
      const name = request.body.category_name;
      return (await this.store.saveCategory(appId, name)) ? done : { status: 409 as const, body: failure(`Category '${name}' already exists`) };
    });

  listEventCategories = (request: HandlerRequest<'listEventCategories'>): Promise<Reply<'listEventCategories'>> =>
    this.gated(request, 'get', async (appId) => ({ status: 200 as const, body: { success: true as const, data: await this.store.categories(appId) } }));

  getEventCategory = (request: HandlerRequest<'getEventCategory'>): Promise<Reply<'getEventCategory'>> =>
    this.gated(request, 'get', async (appId) => {
      const name = String(request.path.category);
      const category = (await this.store.categories(appId)).find((c) => c.name === name);
      return category ? { status: 200 as const, body: { success: true as const, data: category } } : { status: 400 as const, body: failure(`Category '${name}' not found`) };
    });

  updateEventCategory = (request: HandlerRequest<'updateEventCategory'>): Promise<Reply<'updateEventCategory'>> =>
    this.gated(request, 'put', async (appId) => {
      const id = Number(request.path.category);
      const name = request.body.category_name;
      if (await this.store.saveCategory(appId, name, id)) return done;
      const exists = (await this.store.categories(appId)).some((c) => c.id === id);
      return { status: 409 as const, body: failure(exists ? `Category '${name}' already exists` : `Category ${id} does not exist`) };
    });

  deleteEventCategory = (request: HandlerRequest<'deleteEventCategory'>): Promise<Reply<'deleteEventCategory'>> =>
    this.gated(request, 'delete', async (appId) => {
      const id = Number(request.path.category);
      return (await this.store.deleteCategory(appId, id)) ? done : { status: 409 as const, body: failure(`Category ${id} does not exist`) };
    });
}
