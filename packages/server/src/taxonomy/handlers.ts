// Handlers of the taxonomy group: every request needs the project's taxonomy entitlement
// (403 without; `svc-server admin grant-taxonomy`) and passes the taxonomy limits (429).
// Changes run in one transaction of the plan; a refused one (409) writes nothing.
import type { RequestProblem } from '@svc/openapi-validation';
import { describeProblems, operations } from '@svc/openapi-validation';
import type { Rejections } from '../http/app.js';
import type { components, operations as TaxonomyOperations } from '../generated/taxonomy.js';
import type { HandlerRequest, OperationId, Reply } from '../http/operations.js';
import { afterDeletion, afterRestoration, applyFields, type EventTypeEntry, type EventTypeKind, hiddenFlagOnPlanned, kindOf, newEntry, Refusal } from './event-types.js';
import type { IngestedNames } from './ingested.js';
import type { TaxonomyLimits } from './limits.js';
import { taxonomyCost } from './limits.js';
import { applyDefinition, applyEventPropertyFields, type EventPropertyEntry, invalidValue, newDefinition, placeEventProperty, type PropertyDefinition, renameEventProperty } from './properties.js';
import type { TaxonomyPlan, TaxonomyStore } from './store.js';

type Schemas = components['schemas'];
type TaxonomyError = Schemas['TaxonomyError'];
type TaxonomyOperation = keyof TaxonomyOperations;
type Method = 'get' | 'post' | 'put' | 'delete';
type Gate = { status: 403; body: TaxonomyError } | { status: 429; body: TaxonomyError; headers: Record<string, string> };

const failure = (message: string): TaxonomyError => ({ success: false, errors: [{ message }] });
const done = { status: 200 as const, body: { success: true as const } };
const conflict = (message: string) => ({ status: 409 as const, body: failure(message) });
const notFound = (message: string) => ({ status: 400 as const, body: failure(message) });
const found = <T>(data: T) => ({ status: 200 as const, body: { success: true as const, data } });

/** A taxonomy request that breaks the spec: 400 with the taxonomy error body. */
export function rejectTaxonomyRequest(operation: OperationId) {
  return (problems: RequestProblem[]) => ({ status: 400 as const, body: failure(`Invalid request: ${describeProblems({ valid: false, operation, problems })}`) });
}

/** An event type as the plan and the stored events describe it. */
interface ResolvedEventType {
  name: string;
  entry: EventTypeEntry | undefined;
  kind: EventTypeKind | undefined;
  /** The name its events were ingested under. */
  ingestedName: string;
}

const inSchema = (kind: EventTypeKind | undefined) => kind !== undefined && kind !== 'deleted';

function eventTypeView(entry: EventTypeEntry, category: string | null): Schemas['EventType'] {
  return {
    event_type: entry.name,
    category: category === null ? null : { name: category },
    description: entry.description,
    display_name: entry.displayName,
    is_active: entry.isActive,
    ...entry.hidden,
    tags: entry.tags,
    owner: entry.owner,
  };
}

const definitionView = (d: PropertyDefinition) => ({ description: d.description, type: d.type, regex: d.regex, enum_values: d.enumValues && d.enumValues.join(','), is_array_type: d.isArray, classifications: d.classifications });

const eventPropertyView = (p: EventPropertyEntry): Schemas['EventProperty'] => ({ event_property: p.name, event_type: p.eventType, ...definitionView(p), is_required: p.isRequired, is_hidden: p.isHidden });

const userPropertyView = (p: PropertyDefinition): Schemas['UserProperty'] => ({ user_property: p.name, ...definitionView(p) });

/** An ingested event type that the plan knows nothing about yet. */
const unplanned = (name: string): EventTypeEntry => ({ ...newEntry(name), planned: false });

export class TaxonomyHandlers {
  constructor(
    private readonly store: TaxonomyStore,
    private readonly limits: TaxonomyLimits,
    private readonly ingested: IngestedNames,
  ) {}

  /** Runs `work` for an entitled project within the limits, or answers why not. */
  private async gated<R>(request: HandlerRequest<TaxonomyOperation>, method: Method, work: (appId: number) => Promise<R>): Promise<R | Gate> {
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

  /** `gated`, with the work on the project's plan in one transaction. */
  private planned<R>(request: HandlerRequest<TaxonomyOperation>, method: Method, work: (plan: TaxonomyPlan, ingestedTypes: Set<string>) => Promise<R>): Promise<R | Gate> {
    return this.gated(request, method, async (appId) => {
      const ingestedTypes = await this.ingested.eventTypes(appId);
      return this.store.change(appId, (plan) => work(plan, ingestedTypes));
    });
  }

  private async resolve(plan: TaxonomyPlan, name: string, ingestedTypes: Set<string>): Promise<ResolvedEventType> {
    const entry = await plan.eventType(name);
    // An ingested name renamed in the plan is known by its new name only.
    if (!entry && (await plan.transformationOf(name))) return { name, entry, kind: undefined, ingestedName: name };
    const ingestedName = entry?.transformedFrom ?? name;
    return { name, entry, kind: kindOf(entry, ingestedTypes.has(ingestedName)), ingestedName };
  }

  /** The id of the category a request names (undefined when it names none), or the refusal when none has the name. */
  private async categoryId(plan: TaxonomyPlan, name: string | undefined): Promise<number | undefined | Refusal> {
    if (name === undefined) return undefined;
    return (await plan.categoryId(name)) ?? new Refusal(`Category '${name}' not found`);
  }

  /** Whether a name is taken by an event type of the plan or of the stored events. */
  private async eventTypeNameTaken(plan: TaxonomyPlan, name: string, ingestedTypes: Set<string>): Promise<boolean> {
    return ingestedTypes.has(name) || (await plan.eventType(name)) !== undefined || (await plan.transformationOf(name)) !== undefined;
  }

  createEventCategory = (request: HandlerRequest<'createEventCategory'>): Promise<Reply<'createEventCategory'>> =>
    this.gated(request, 'post', async (appId) => {
      const name = request.body.category_name;
      return (await this.store.saveCategory(appId, name)) ? done : conflict(`Category '${name}' already exists`);
    });

  listEventCategories = (request: HandlerRequest<'listEventCategories'>): Promise<Reply<'listEventCategories'>> =>
    this.gated(request, 'get', async (appId) => found(await this.store.categories(appId)));

  getEventCategory = (request: HandlerRequest<'getEventCategory'>): Promise<Reply<'getEventCategory'>> =>
    this.gated(request, 'get', async (appId) => {
      const name = String(request.path.category);
      const category = (await this.store.categories(appId)).find((c) => c.name === name);
      return category ? found(category) : notFound(`Category '${name}' not found`);
    });

  updateEventCategory = (request: HandlerRequest<'updateEventCategory'>): Promise<Reply<'updateEventCategory'>> =>
    this.gated(request, 'put', async (appId) => {
      const id = Number(request.path.category);
      const name = request.body.category_name;
      if (await this.store.saveCategory(appId, name, id)) return done;
      const exists = (await this.store.categories(appId)).some((c) => c.id === id);
      return conflict(exists ? `Category '${name}' already exists` : `Category ${id} does not exist`);
    });

  deleteEventCategory = (request: HandlerRequest<'deleteEventCategory'>): Promise<Reply<'deleteEventCategory'>> =>
    this.gated(request, 'delete', async (appId) => {
      const id = Number(request.path.category);
      return (await this.store.deleteCategory(appId, id)) ? done : conflict(`Category ${id} does not exist`);
    });

  createEventType = (request: HandlerRequest<'createEventType'>): Promise<Reply<'createEventType'>> =>
    this.planned(request, 'post', async (plan, ingestedTypes) => {
      const fields = request.body;
      const type = await this.resolve(plan, fields.event_type, ingestedTypes);
      if (!type.entry && type.kind === undefined && (await plan.transformationOf(type.name))) return conflict(`Event type '${type.name}' was renamed in the tracking plan`);
      if (type.kind !== undefined && type.kind !== 'unexpected') return conflict(`Event type '${type.name}' already exists`);
      const flag = hiddenFlagOnPlanned(fields, type.kind);
      if (flag) return conflict(`${flag} can only be set on ingested event types`);
      const categoryId = await this.categoryId(plan, fields.category);
      if (categoryId instanceof Refusal) return conflict(categoryId.message);
      await plan.saveEventType(applyFields({ ...(type.entry ?? newEntry(type.name)), planned: true }, fields, categoryId));
      return done;
    });

  listEventTypes = (request: HandlerRequest<'listEventTypes'>): Promise<Reply<'listEventTypes'>> =>
    this.planned(request, 'get', async (plan, ingestedTypes) => {
      const entries = await plan.eventTypes();
      const described = new Set(entries.flatMap(({ entry }) => [entry.name, ...(entry.transformedFrom === null ? [] : [entry.transformedFrom])]));
      const shown = entries.filter(({ entry }) => request.query.showDeleted === true || !entry.deleted).map(({ entry, category }) => eventTypeView(entry, category));
      for (const name of ingestedTypes) if (!described.has(name)) shown.push(eventTypeView(unplanned(name), null));
      return found(shown.sort((a, b) => (a.event_type < b.event_type ? -1 : a.event_type > b.event_type ? 1 : 0)));
    });

  getEventType = (request: HandlerRequest<'getEventType'>): Promise<Reply<'getEventType'>> =>
    this.planned(request, 'get', async (plan, ingestedTypes) => {
      const type = await this.resolve(plan, request.path.event_type, ingestedTypes);
      if (type.kind === undefined) return notFound(`Event type '${type.name}' not found`);
      const category = type.entry?.categoryId == null ? null : ((await plan.categoryName(type.entry.categoryId)) ?? null);
      return found(eventTypeView(type.entry ?? unplanned(type.name), category));
    });

  updateEventType = (request: HandlerRequest<'updateEventType'>): Promise<Reply<'updateEventType'>> =>
    this.planned(request, 'put', async (plan, ingestedTypes) => {
      const fields = request.body;
      const type = await this.resolve(plan, request.path.event_type, ingestedTypes);
      if (!inSchema(type.kind)) return conflict(`Event type '${type.name}' is not in the schema`);
      const flag = hiddenFlagOnPlanned(fields, type.kind);
      if (flag) return conflict(`${flag} can only be set on ingested event types`);
      const categoryId = await this.categoryId(plan, fields.category);
      if (categoryId instanceof Refusal) return conflict(categoryId.message);
      let updated = applyFields(type.entry ?? unplanned(type.name), fields, categoryId);
      const newName = fields.new_event_type;
      if (newName !== undefined && newName !== type.name) {
        if (await this.eventTypeNameTaken(plan, newName, ingestedTypes)) return conflict(`Event type '${newName}' already exists`);
        // Events already stored keep their name: an ingested event type renamed in the plan
        // is a transformation of the name it was ingested under.
        const transformed = type.kind === 'live' || type.kind === 'unexpected';
        updated = { ...updated, name: newName, ...(transformed ? { planned: true, transformedFrom: type.ingestedName } : {}) };
        await plan.renameEventTypeOfProperties(type.name, newName);
      }
      await plan.saveEventType(updated, type.name);
      return done;
    });

  /** Moves the event type of the path by a rule of the states table (null: out of the plan with its properties). */
  private moveEventType(request: HandlerRequest<'deleteEventType' | 'createEventTypeRestoration'>, method: Method, rule: typeof afterDeletion) {
    return this.planned(request, method, async (plan, ingestedTypes) => {
      const type = await this.resolve(plan, request.path.event_type, ingestedTypes);
      const next = rule(type.name, type.entry, type.kind);
      if (next instanceof Refusal) return conflict(next.message);
      if (next === null) {
        await plan.removeEventType(type.name);
        await plan.removeEventPropertiesOf(type.name);
      } else {
        await plan.saveEventType(next);
      }
      return done;
    });
  }

  deleteEventType = (request: HandlerRequest<'deleteEventType'>): Promise<Reply<'deleteEventType'>> => this.moveEventType(request, 'delete', afterDeletion);

  createEventTypeRestoration = (request: HandlerRequest<'createEventTypeRestoration'>): Promise<Reply<'createEventTypeRestoration'>> => this.moveEventType(request, 'post', afterRestoration);

  /** The event type a property request names (null: shared), or why it cannot be used. */
  private async propertyEventType(plan: TaxonomyPlan, name: string | undefined, ingestedTypes: Set<string>): Promise<ResolvedEventType | null | Refusal> {
    if (name === undefined) return null;
    const type = await this.resolve(plan, name, ingestedTypes);
    return inSchema(type.kind) ? type : new Refusal(`Event type '${name}' is not in the schema`);
  }

  /** Whether events (of the event type, any when shared) carried the property. */
  private propertyIngested(appId: number, property: string, type: ResolvedEventType | null): Promise<boolean> {
    return this.ingested.hasEventProperty(appId, property, type === null ? null : [type.ingestedName]);
  }

  createEventProperty = (request: HandlerRequest<'createEventProperty'>): Promise<Reply<'createEventProperty'>> =>
    this.planned(request, 'post', async (plan, ingestedTypes) => {
      const fields = request.body;
      const invalid = invalidValue(fields);
      if (invalid) return notFound(invalid);
      const type = await this.propertyEventType(plan, fields.event_type, ingestedTypes);
      if (type instanceof Refusal) return conflict(type.message);
      const placed = placeEventProperty(fields.event_property, type?.name ?? null, await plan.eventPropertiesNamed(fields.event_property));
      if (placed instanceof Refusal) return conflict(placed.message);
      const ingested = fields.is_hidden !== undefined && (await this.propertyIngested(plan.appId, placed.name, type));
      const entry = applyEventPropertyFields(placed, fields, ingested);
      if (entry instanceof Refusal) return conflict(entry.message);
      await plan.saveEventProperties([entry]);
      return done;
    });

  listEventProperties = (request: HandlerRequest<'listEventProperties'>): Promise<Reply<'listEventProperties'>> =>
    this.planned(request, 'get', async (plan, ingestedTypes) => {
      const type = await this.propertyEventType(plan, request.query.event_type, ingestedTypes);
      if (type instanceof Refusal) return notFound(type.message);
      const properties = await plan.eventProperties(type?.name ?? null);
      const name = request.query.event_property;
      return found(properties.filter((p) => name === undefined || p.name === name).map(eventPropertyView));
    });

  /** The property a request addresses (at its event type, or shared), or why not. */
  private async addressedProperty(plan: TaxonomyPlan, name: string, eventType: string | undefined, ingestedTypes: Set<string>) {
    const type = await this.propertyEventType(plan, eventType, ingestedTypes);
    if (type instanceof Refusal) return type;
    const sameName = await plan.eventPropertiesNamed(name);
    const entry = sameName.find((p) => p.eventType === (type?.name ?? null));
    return entry ? { entry, type, sameName } : new Refusal(`Event property '${name}' not found${type ? ` on event type '${type.name}'` : ''}`);
  }

  getEventProperty = (request: HandlerRequest<'getEventProperty'>): Promise<Reply<'getEventProperty'>> =>
    this.planned(request, 'get', async (plan, ingestedTypes) => {
      const addressed = await this.addressedProperty(plan, request.path.event_property, request.query.event_type, ingestedTypes);
      return addressed instanceof Refusal ? notFound(addressed.message) : found(eventPropertyView(addressed.entry));
    });

  updateEventProperty = (request: HandlerRequest<'updateEventProperty'>): Promise<Reply<'updateEventProperty'>> =>
    this.planned(request, 'put', async (plan, ingestedTypes) => {
      const fields = request.body;
      const invalid = invalidValue(fields);
      if (invalid) return notFound(invalid);
      const addressed = await this.addressedProperty(plan, request.path.event_property, fields.event_type, ingestedTypes);
      if (addressed instanceof Refusal) return conflict(addressed.message);
      const { entry, type, sameName } = addressed;
      const ingested = fields.is_hidden !== undefined && (await this.propertyIngested(plan.appId, entry.name, type));
      const updated = applyEventPropertyFields(entry, fields, ingested);
      if (updated instanceof Refusal) return conflict(updated.message);
      const newName = fields.new_event_property;
      if (newName === undefined || newName === entry.name) {
        await plan.saveEventProperties([updated]);
        return done;
      }
      const renamed = renameEventProperty(updated, newName, sameName.map((p) => (p === entry ? updated : p)), await plan.eventPropertiesNamed(newName));
      if (renamed instanceof Refusal) return conflict(renamed.message);
      await plan.saveEventProperties(renamed, entry.name);
      return done;
    });

  deleteEventProperty = (request: HandlerRequest<'deleteEventProperty'>): Promise<Reply<'deleteEventProperty'>> =>
    this.planned(request, 'delete', async (plan, ingestedTypes) => {
      const addressed = await this.addressedProperty(plan, request.path.event_property, request.query.event_type, ingestedTypes);
      if (addressed instanceof Refusal) return conflict(addressed.message);
      const { entry } = addressed;
      if (entry.eventType === null) await plan.removeSharedEventProperty(entry.name);
      else await plan.removeEventProperty(entry.name, entry.eventType);
      return done;
    });

  createUserProperty = (request: HandlerRequest<'createUserProperty'>): Promise<Reply<'createUserProperty'>> =>
    this.planned(request, 'post', async (plan) => {
      const fields = request.body;
      const invalid = invalidValue(fields);
      if (invalid) return notFound(invalid);
      if (await plan.userProperty(fields.user_property)) return conflict(`User property '${fields.user_property}' already exists`);
      const entry = applyDefinition(newDefinition(fields.user_property), fields);
      if (entry instanceof Refusal) return conflict(entry.message);
      await plan.saveUserProperty(entry);
      return done;
    });

  listUserProperties = (request: HandlerRequest<'listUserProperties'>): Promise<Reply<'listUserProperties'>> =>
    this.planned(request, 'get', async (plan) => found((await plan.userProperties()).map(userPropertyView)));

  getUserProperty = (request: HandlerRequest<'getUserProperty'>): Promise<Reply<'getUserProperty'>> =>
    this.planned(request, 'get', async (plan) => {
      const entry = await plan.userProperty(request.path.user_property);
      return entry ? found(userPropertyView(entry)) : notFound(`User property '${request.path.user_property}' not found`);
    });

  updateUserProperty = (request: HandlerRequest<'updateUserProperty'>): Promise<Reply<'updateUserProperty'>> =>
    this.planned(request, 'put', async (plan) => {
      const fields = request.body;
      const invalid = invalidValue(fields);
      if (invalid) return notFound(invalid);
      const name = request.path.user_property;
      const entry = await plan.userProperty(name);
      if (!entry) return conflict(`User property '${name}' not found`);
      const newName = fields.new_user_property ?? name;
      if (newName !== name && (await plan.userProperty(newName))) return conflict(`User property '${newName}' already exists`);
      const updated = applyDefinition({ ...entry, name: newName }, fields);
      if (updated instanceof Refusal) return conflict(updated.message);
      await plan.saveUserProperty(updated, name);
      return done;
    });

  deleteUserProperty = (request: HandlerRequest<'deleteUserProperty'>): Promise<Reply<'deleteUserProperty'>> =>
    this.planned(request, 'delete', async (plan) => {
      const name = request.path.user_property;
      if (!(await plan.userProperty(name))) return conflict(`User property '${name}' not found`);
      await plan.removeUserProperty(name);
      return done;
    });
}

/** Invalid requests of the taxonomy operations that document 400: the taxonomy error body. */
export function taxonomyRejections(): Rejections {
  const documented = operations().filter((ref) => ref.bundle.name === 'taxonomy' && '400' in (ref.op.responses as object));
  return Object.fromEntries(documented.map((ref) => [ref.op.operationId, rejectTaxonomyRequest(ref.op.operationId as OperationId)])) as Rejections;
}
