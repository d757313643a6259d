// The tracking plan's event and user properties (doc 000, "Taxonomy event property"): the
// definition rules shared by both, and where an event property goes (shared, an override
// for one event type, or a property of that event type alone). Pure rules, no storage.
import type { components } from '../generated/taxonomy.js';
import { Refusal } from './event-types.js';

export type PropertyDataType = components['schemas']['PropertyDataType'];
export type Classification = components['schemas']['Classifications'][number];

/** What event and user properties both define. */
export interface PropertyDefinition {
  name: string;
  description: string;
  type: PropertyDataType;
  regex: string | null;
  enumValues: string[] | null;
  isArray: boolean;
  classifications: Classification[];
}

export interface EventPropertyEntry extends PropertyDefinition {
  /** Null for a shared property. */
  eventType: string | null;
  /** A property of an event type that also exists elsewhere (shared or on other event types). */
  override: boolean;
  isRequired: boolean;
  isHidden: boolean;
}

/** The definition fields a create or update request may send (the spec's forms, decoded). */
export interface PropertyFields {
  description?: string;
  type?: PropertyDataType;
  regex?: string;
  enum_values?: string[];
  is_array_type?: boolean;
  classifications?: Classification[];
}

export interface EventPropertyFields extends PropertyFields {
  is_required?: boolean;
  is_hidden?: boolean;
}

export const newDefinition = (name: string): PropertyDefinition => ({ name, description: '', type: 'any', regex: null, enumValues: null, isArray: false, classifications: [] });

/** A value the spec's schema lets through but that is still not allowed (400). */
export function invalidValue(fields: PropertyFields): string | undefined {
  if (fields.regex === undefined) return undefined;
  try {
    new RegExp(fields.regex);
    return undefined;
  } catch (error) {
    return `regex: ${(error as Error).message}`;
  }
}

/**
 * `entry` with the sent fields applied. A change of type drops the pattern or the values that
 * applied to the old type only; sending them for a type they do not apply to is refused.
 */
export function applyDefinition<T extends PropertyDefinition>(entry: T, fields: PropertyFields): T | Refusal {
  const type = fields.type ?? entry.type;
  if (fields.regex !== undefined && type !== 'string') return new Refusal(`regex applies only to properties of type string, not ${type}`);
  if (fields.enum_values !== undefined && type !== 'enum') return new Refusal(`enum_values apply only to properties of type enum, not ${type}`);
  return {
    ...entry,
    description: fields.description ?? entry.description,
    type,
    regex: type === 'string' ? (fields.regex ?? entry.regex) : null,
    enumValues: type === 'enum' ? (fields.enum_values ?? entry.enumValues) : null,
    isArray: fields.is_array_type ?? entry.isArray,
    classifications: fields.classifications ?? entry.classifications,
  };
}

/** An event property with the sent fields applied, by the rules of its place and of ingestion. */
export function applyEventPropertyFields(entry: EventPropertyEntry, fields: EventPropertyFields, ingested: boolean): EventPropertyEntry | Refusal {
  if (fields.classifications !== undefined && entry.eventType !== null) return new Refusal('classifications can only be set on shared event properties');
  if (fields.is_hidden !== undefined && !ingested) return new Refusal(`is_hidden can only be set on ingested event properties ('${entry.name}' was never ingested${entry.eventType === null ? '' : ` with '${entry.eventType}'`})`);
  const defined = applyDefinition(entry, fields);
  if (defined instanceof Refusal) return defined;
  return { ...defined, isRequired: fields.is_required ?? entry.isRequired, isHidden: fields.is_hidden ?? entry.isHidden };
}

/**
 * A new event property `name` for `eventType` (null: shared), given every entry of that name:
 * refused where it already exists, an override where it exists elsewhere only.
 */
export function placeEventProperty(name: string, eventType: string | null, sameName: EventPropertyEntry[]): EventPropertyEntry | Refusal {
  if (sameName.some((e) => e.eventType === eventType)) {
    return new Refusal(eventType === null ? `Event property '${name}' already exists` : `Event property '${name}' already exists on event type '${eventType}'`);
  }
  return { ...newDefinition(name), eventType, override: eventType !== null && sameName.length > 0, isRequired: false, isHidden: false };
}

/**
 * The entries after renaming the property `entry` to `newName`, given every entry of both
 * names: a shared property takes its overrides along; an override keeps the name it overrides.
 */
export function renameEventProperty(entry: EventPropertyEntry, newName: string, sameName: EventPropertyEntry[], newNameEntries: EventPropertyEntry[]): EventPropertyEntry[] | Refusal {
  if (entry.override) return new Refusal(`Event property '${entry.name}' on '${entry.eventType}' overrides a property of that name: rename the shared property instead`);
  if (entry.eventType === null) {
    if (newNameEntries.length > 0) return new Refusal(`Event property '${newName}' already exists`);
    return sameName.filter((e) => e.eventType === null || e.override).map((e) => ({ ...e, name: newName }));
  }
  if (newNameEntries.some((e) => e.eventType === entry.eventType)) return new Refusal(`Event property '${newName}' already exists on event type '${entry.eventType}'`);
  return [{ ...entry, name: newName, override: newNameEntries.length > 0 }];
}
