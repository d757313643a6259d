// Handlers of the annotations group: categories (`{id, name}`, or `{id, category}` in the
// rename answer and in bulk-assigned annotations) and annotations, global or per chart.
import type { components } from '../generated/annotations.js';
import type { HandlerRequest, Reply } from '../http/operations.js';
import type { Caller } from '../http/operations.js';
import { instant } from '../model/time.js';
import type { AnnotationStore, Category, StoredAnnotation } from './store.js';

type AnnotationCreate = components['schemas']['AnnotationCreate'];
type AnnotationUpdate = components['schemas']['AnnotationUpdate'];

const appOf = (caller: Caller) => caller.project!.app_id;
const notFound = (what: string) => ({ status: 404 as const, body: { code: 404, error: `${what} not found` } });
const bad = (error: string) => ({ status: 400 as const, body: { code: 400, error } });

export class AnnotationHandlers {
  constructor(private readonly store: AnnotationStore) {}

  /** The category of an annotation request, by name: undefined when none, null when unknown. */
  private async categoryNamed(appId: number, name: string | undefined): Promise<Category | null | undefined> {
    if (name === undefined) return undefined;
    const [category] = await this.store.categories(appId, name);
    return category ?? null;
  }

  createAnnotationCategory = async (request: HandlerRequest<'createAnnotationCategory'>): Promise<Reply<'createAnnotationCategory'>> => {
    const created = await this.store.saveCategory(appOf(request.caller), request.body.category);
    return created ? { status: 200, body: { data: created } } : { status: 409, body: { code: 409, error: `A category named ${request.body.category} exists` } };
  };

  listAnnotationCategories = async (request: HandlerRequest<'listAnnotationCategories'>): Promise<Reply<'listAnnotationCategories'>> => {
    const name = request.query.category;
    if (name === '') return bad('category must not be empty');
    const categories = await this.store.categories(appOf(request.caller), name);
    if (name !== undefined && categories.length === 0) return notFound(`Category ${name}`);
    return { status: 200, body: { data: categories } };
  };

  getAnnotationCategory = async (request: HandlerRequest<'getAnnotationCategory'>): Promise<Reply<'getAnnotationCategory'>> => {
    const category = await this.store.category(appOf(request.caller), request.path.category_id);
    return category ? { status: 200, body: { data: category } } : notFound(`Category ${request.path.category_id}`);
  };

  updateAnnotationCategory = async (request: HandlerRequest<'updateAnnotationCategory'>): Promise<Reply<'updateAnnotationCategory'>> => {
    const appId = appOf(request.caller);
    const id = request.path.category_id;
    if (!(await this.store.category(appId, id))) return notFound(`Category ${id}`);
    const renamed = await this.store.saveCategory(appId, request.body.category, id);
    return renamed ? { status: 200, body: { data: { id, category: renamed.name } } } : { status: 409, body: { code: 409, error: `Another category is named ${request.body.category}` } };
  };

  deleteAnnotationCategory = async (request: HandlerRequest<'deleteAnnotationCategory'>): Promise<Reply<'deleteAnnotationCategory'>> =>
    (await this.store.deleteCategory(appOf(request.caller), request.path.category_id)) ? { status: 200, body: { success: true } } : notFound(`Category ${request.path.category_id}`);

  updateAnnotationCategoryAssignments = async (request: HandlerRequest<'updateAnnotationCategoryAssignments'>): Promise<Reply<'updateAnnotationCategoryAssignments'>> => {
    const appId = appOf(request.caller);
    const category = await this.store.category(appId, request.path.category_id);
    if (!category) return notFound(`Category ${request.path.category_id}`);
    const ids = request.body.annotation_ids;
    if (!(await this.store.assignCategory(appId, category.id, ids))) return bad('annotation_ids names annotations that are not annotations of this project; nothing was changed');
    const annotations = await Promise.all([...new Set(ids)].map((id) => this.store.annotation(appId, id)));
    return { status: 200, body: { data: annotations.map((a) => ({ ...a!, category: { id: category.id, category: category.name } })) } };
  };

  createAnnotation = async (request: HandlerRequest<'createAnnotation'>): Promise<Reply<'createAnnotation'>> => {
    const appId = appOf(request.caller);
    const body = request.body as AnnotationCreate;
    if (body.end !== undefined && instant(body.end) < instant(body.start)) return bad('end is before start');
    const category = await this.categoryNamed(appId, body.category);
    if (category === null) return notFound(`Category ${body.category}`);
    const created = await this.store.createAnnotation(appId, { label: body.label, start: body.start, end: body.end, details: body.details, chart_id: body.chart_id, categoryId: category?.id });
    return { status: 200, body: { data: created } };
  };

  listAnnotations = async (request: HandlerRequest<'listAnnotations'>): Promise<Reply<'listAnnotations'>> => {
    const appId = appOf(request.caller);
    const { category, chart_id: chartId, start, end } = request.query;
    if (category !== undefined && chartId !== undefined) return { status: 409, body: { code: 409, error: 'category and chart_id do not combine: give one of them' } };
    const named = await this.categoryNamed(appId, category);
    const annotations: StoredAnnotation[] =
      named === null
        ? []
        : await this.store.annotations(appId, { categoryId: named?.id, chartId, afterMs: start === undefined ? undefined : instant(start), beforeMs: end === undefined ? undefined : instant(end) });
    return { status: 200, body: { data: annotations } };
  };

  getAnnotation = async (request: HandlerRequest<'getAnnotation'>): Promise<Reply<'getAnnotation'>> => {
    const annotation = await this.store.annotation(appOf(request.caller), request.path.annotation_id);
    return annotation ? { status: 200, body: { data: annotation } } : notFound(`Annotation ${request.path.annotation_id}`);
  };

  updateAnnotation = async (request: HandlerRequest<'updateAnnotation'>): Promise<Reply<'updateAnnotation'>> => {
    const appId = appOf(request.caller);
    const id = request.path.annotation_id;
    const current = await this.store.annotation(appId, id);
    if (!current) return notFound(`Annotation ${id}`);
    const change = request.body as AnnotationUpdate;
    const start = change.start ?? current.start;
    const end = change.end === undefined ? current.end : change.end;
    if (end !== null && instant(end) < instant(start)) return bad('end is before start');
    const category = await this.categoryNamed(appId, change.category);
    if (category === null) return notFound(`Category ${change.category}`);
    await this.store.updateAnnotation(appId, id, { label: change.label, start: change.start, end: change.end, details: change.details, chart_id: change.chart_id, categoryId: category?.id });
    return { status: 200, body: { data: (await this.store.annotation(appId, id))! } };
  };

  deleteAnnotation = async (request: HandlerRequest<'deleteAnnotation'>): Promise<Reply<'deleteAnnotation'>> =>
    (await this.store.deleteAnnotation(appOf(request.caller), request.path.annotation_id)) ? { status: 200, body: { success: true } } : notFound(`Annotation ${request.path.annotation_id}`);
}
