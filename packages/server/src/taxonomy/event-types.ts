// The tracking plan's event types (doc 000, "Taxonomy event type, delete and restore"): the
// kind of an event type follows from its plan entry and from whether events of it were
// ingested; delete and restore move it by the states table. Pure rules, no storage.

export type EventTypeKind = 'live' | 'unexpected' | 'planned' | 'transformed' | 'deleted';

export const HIDDEN_FLAGS = ['is_hidden_from_dropdowns', 'is_hidden_from_persona_results', 'is_hidden_from_pathfinder', 'is_hidden_from_timeline'] as const;
export type HiddenFlag = (typeof HIDDEN_FLAGS)[number];

/** What the plan holds about one event type (an ingested event type without one has none). */
export interface EventTypeEntry {
  name: string;
  /** In the tracking plan (created, or added by the deletion of an unexpected event type). */
  planned: boolean;
  deleted: boolean;
  /** For an ingested event type renamed in the plan: the ingested name it stands for. */
  transformedFrom: string | null;
  categoryId: number | null;
  description: string | null;
  displayName: string | null;
  isActive: boolean;
  hidden: Record<HiddenFlag, boolean>;
  tags: string[];
  owner: string | null;
}

/** The fields a create or update request may send (the spec's forms, decoded). */
export interface EventTypeFields {
  category?: string;
  description?: string;
  display_name?: string;
  is_active?: boolean;
  is_hidden_from_dropdowns?: boolean;
  is_hidden_from_persona_results?: boolean;
  is_hidden_from_pathfinder?: boolean;
  is_hidden_from_timeline?: boolean;
  tags?: string[];
  owner?: string;
}

export const newEntry = (name: string): EventTypeEntry => ({
  name,
  planned: true,
  deleted: false,
  transformedFrom: null,
  categoryId: null,
  description: null,
  displayName: null,
  isActive: true,
  hidden: { is_hidden_from_dropdowns: false, is_hidden_from_persona_results: false, is_hidden_from_pathfinder: false, is_hidden_from_timeline: false },
  tags: [],
  owner: null,
});

/** The kind of an event type; undefined when it is neither in the plan nor ingested. */
export function kindOf(entry: EventTypeEntry | undefined, ingested: boolean): EventTypeKind | undefined {
  if (entry?.deleted) return 'deleted';
  if (entry?.transformedFrom) return 'transformed';
  if (entry?.planned) return ingested ? 'live' : 'planned';
  return ingested ? 'unexpected' : undefined;
}

/** Ingested kinds: the hidden flags may be set on these only. */
export const isIngestedKind = (kind: EventTypeKind | undefined) => kind === 'live' || kind === 'unexpected' || kind === 'transformed';

/** A refused change: 409 with this message, nothing changed. */
export class Refusal {
  constructor(readonly message: string) {}
}

/** The hidden flag sent for an event type that was never ingested, if any. */
export function hiddenFlagOnPlanned(fields: EventTypeFields, kind: EventTypeKind | undefined): HiddenFlag | undefined {
  return isIngestedKind(kind) ? undefined : HIDDEN_FLAGS.find((flag) => fields[flag] !== undefined);
}

/** `entry` with the sent fields applied (the category already resolved to its id). */
export function applyFields(entry: EventTypeEntry, fields: EventTypeFields, categoryId: number | null | undefined): EventTypeEntry {
  const hidden = { ...entry.hidden };
  for (const flag of HIDDEN_FLAGS) hidden[flag] = fields[flag] ?? hidden[flag];
  return {
    ...entry,
    categoryId: categoryId === undefined ? entry.categoryId : categoryId,
    description: fields.description ?? entry.description,
    displayName: fields.display_name ?? entry.displayName,
    isActive: fields.is_active ?? entry.isActive,
    hidden,
    tags: fields.tags ?? entry.tags,
    owner: fields.owner ?? entry.owner,
  };
}

/** What a delete does to an event type of `kind`: its new entry, null to remove it from the plan. */
export function afterDeletion(name: string, entry: EventTypeEntry | undefined, kind: EventTypeKind | undefined): EventTypeEntry | null | Refusal {
  switch (kind) {
    case 'live':
      return { ...entry!, deleted: true };
    case 'unexpected':
      return { ...(entry ?? newEntry(name)), planned: true, deleted: true };
    case 'planned':
      return null;
    case 'transformed':
      return new Refusal(`Event type '${name}' is transformed: transformed event types cannot be deleted`);
    default:
      return new Refusal(`Event type '${name}' is deleted or does not exist`);
  }
}

/** What a restore does: the entry back in the plan (live, or planned if no event came). */
export function afterRestoration(name: string, entry: EventTypeEntry | undefined, kind: EventTypeKind | undefined): EventTypeEntry | Refusal {
  return kind === 'deleted' ? { ...entry!, deleted: false } : new Refusal(`Event type '${name}' is not deleted or does not exist`);
}
