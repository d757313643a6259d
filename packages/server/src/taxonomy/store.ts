// The taxonomy's entities in the engine's own tables, per project: event categories, the
// tracking plan's event types, event properties and custom user properties. Changes run in
// one transaction through a `TaxonomyPlan`, so a refused or failed change leaves nothing.
import { EntityTables } from '../store/entity-tables.js';
import type { SqlSession, SqlValue } from '../store/types.js';
import { type EventTypeEntry, HIDDEN_FLAGS } from './event-types.js';
import type { Classification, EventPropertyEntry, PropertyDataType, PropertyDefinition } from './properties.js';
import type { EventTypeNames } from '../model/event-type-names.js';

const TAXONOMY_TABLES = `
CREATE SEQUENCE IF NOT EXISTS event_category_ids START 1;
CREATE TABLE IF NOT EXISTS event_categories (id BIGINT PRIMARY KEY, app_id INTEGER, name VARCHAR);
CREATE TABLE IF NOT EXISTS plan_event_types (app_id INTEGER, name VARCHAR, planned BOOLEAN, deleted BOOLEAN, transformed_from VARCHAR, category_id BIGINT,
  description VARCHAR, display_name VARCHAR, is_active BOOLEAN, ${HIDDEN_FLAGS.map((flag) => `${flag} BOOLEAN`).join(', ')}, tags JSON, owner VARCHAR);
CREATE TABLE IF NOT EXISTS plan_event_properties (app_id INTEGER, event_type VARCHAR, name VARCHAR, override BOOLEAN, description VARCHAR, type VARCHAR,
  regex VARCHAR, enum_values JSON, is_array BOOLEAN, is_required BOOLEAN, is_hidden BOOLEAN, classifications JSON);
CREATE TABLE IF NOT EXISTS plan_versions (app_id INTEGER PRIMARY KEY, version BIGINT);
CREATE TABLE IF NOT EXISTS plan_user_properties (app_id INTEGER, name VARCHAR, description VARCHAR, type VARCHAR, regex VARCHAR, enum_values JSON,
  is_array BOOLEAN, classifications JSON);
`;

export interface EventCategory {
  id: number;
  name: string;
}

type Row = Record<string, unknown>;
type Session = Omit<SqlSession, 'transaction'>;

const text = (value: unknown) => (value === null || value === undefined ? null : String(value));
const json = <T>(value: unknown): T => JSON.parse(String(value)) as T;
const jsonOrNull = <T>(value: unknown): T | null => (value === null || value === undefined ? null : json<T>(value));

const eventTypeOf = (row: Row): EventTypeEntry => ({
  name: String(row.name),
  planned: row.planned === true,
  deleted: row.deleted === true,
  transformedFrom: text(row.transformed_from),
  categoryId: row.category_id === null ? null : Number(row.category_id),
  description: text(row.description),
  displayName: text(row.display_name),
  isActive: row.is_active === true,
  hidden: Object.fromEntries(HIDDEN_FLAGS.map((flag) => [flag, row[flag] === true])) as EventTypeEntry['hidden'],
  tags: json<string[]>(row.tags),
  owner: text(row.owner),
});

const definitionOf = (row: Row): PropertyDefinition => ({
  name: String(row.name),
  description: String(row.description),
  type: String(row.type) as PropertyDataType,
  regex: text(row.regex),
  enumValues: jsonOrNull<string[]>(row.enum_values),
  isArray: row.is_array === true,
  classifications: json<Classification[]>(row.classifications),
});

const eventPropertyOf = (row: Row): EventPropertyEntry => ({
  ...definitionOf(row),
  eventType: text(row.event_type),
  override: row.override === true,
  isRequired: row.is_required === true,
  isHidden: row.is_hidden === true,
});

const definitionValues = (d: PropertyDefinition): SqlValue[] => [d.description, d.type, d.regex, d.enumValues && JSON.stringify(d.enumValues), d.isArray];
const placeholders = (count: number) => Array.from({ length: count }, () => '?').join(', ');

/** The project's plan within one transaction. */
export class TaxonomyPlan {
  constructor(
    private readonly sql: Session,
    readonly appId: number,
  ) {}

  async categoryName(id: number): Promise<string | undefined> {
    const [row] = await this.sql.rows('SELECT name FROM event_categories WHERE app_id = ? AND id = ?', [this.appId, id]);
    return row ? String(row.name) : undefined;
  }

  async categoryId(name: string): Promise<number | undefined> {
    const [row] = await this.sql.rows('SELECT id FROM event_categories WHERE app_id = ? AND name = ?', [this.appId, name]);
    return row ? Number(row.id) : undefined;
  }

  async eventType(name: string): Promise<EventTypeEntry | undefined> {
    const [row] = await this.sql.rows('SELECT * FROM plan_event_types WHERE app_id = ? AND name = ?', [this.appId, name]);
    return row && eventTypeOf(row);
  }

  /** The entry whose ingested events `name` stands for under another name, if any. */
  async transformationOf(name: string): Promise<EventTypeEntry | undefined> {
    const [row] = await this.sql.rows('SELECT * FROM plan_event_types WHERE app_id = ? AND transformed_from = ?', [this.appId, name]);
    return row && eventTypeOf(row);
  }

  /** With their category's name (null when it has none, or it was deleted). */
  async eventTypes(): Promise<{ entry: EventTypeEntry; category: string | null }[]> {
    const rows = await this.sql.rows('SELECT t.*, c.name AS category_name FROM plan_event_types t LEFT JOIN event_categories c ON c.id = t.category_id AND c.app_id = t.app_id WHERE t.app_id = ? ORDER BY t.name', [this.appId]);
    return rows.map((row) => ({ entry: eventTypeOf(row), category: text(row.category_name) }));
  }

  /** Writes `entry` in place of the entry named `previousName` (its own name by default). */
  async saveEventType(entry: EventTypeEntry, previousName = entry.name): Promise<void> {
    await this.removeEventType(previousName);
    const values: SqlValue[] = [this.appId, entry.name, entry.planned, entry.deleted, entry.transformedFrom, entry.categoryId, entry.description, entry.displayName, entry.isActive];
    values.push(...HIDDEN_FLAGS.map((flag) => entry.hidden[flag]), JSON.stringify(entry.tags), entry.owner);
    await this.sql.run(`INSERT INTO plan_event_types VALUES (${placeholders(values.length)})`, values);
  }

  async removeEventType(name: string): Promise<void> {
    await this.sql.run('DELETE FROM plan_event_types WHERE app_id = ? AND name = ?', [this.appId, name]);
  }

  /** Every event property of these names, shared and specific. */
  async eventPropertiesNamed(...names: string[]): Promise<EventPropertyEntry[]> {
    const rows = await this.sql.rows(`SELECT * FROM plan_event_properties WHERE app_id = ? AND name IN (${placeholders(names.length)}) ORDER BY name, event_type NULLS FIRST`, [this.appId, ...names]);
    return rows.map(eventPropertyOf);
  }

  /** The properties of `eventType` (null: the shared ones). */
  async eventProperties(eventType: string | null): Promise<EventPropertyEntry[]> {
    const rows = await this.sql.rows('SELECT * FROM plan_event_properties WHERE app_id = ? AND event_type IS NOT DISTINCT FROM ? ORDER BY name', [this.appId, eventType]);
    return rows.map(eventPropertyOf);
  }

  /** Writes the entries in place of the entries of `previousName` at the same event types. */
  async saveEventProperties(entries: EventPropertyEntry[], previousName?: string): Promise<void> {
    for (const entry of entries) {
      await this.removeEventProperty(previousName ?? entry.name, entry.eventType);
      const values: SqlValue[] = [this.appId, entry.eventType, entry.name, entry.override, ...definitionValues(entry), entry.isRequired, entry.isHidden, JSON.stringify(entry.classifications)];
      await this.sql.run(`INSERT INTO plan_event_properties VALUES (${placeholders(values.length)})`, values);
    }
  }

  async removeEventProperty(name: string, eventType: string | null): Promise<void> {
    await this.sql.run('DELETE FROM plan_event_properties WHERE app_id = ? AND name = ? AND event_type IS NOT DISTINCT FROM ?', [this.appId, name, eventType]);
  }

  async removeEventPropertiesOf(eventType: string): Promise<void> {
    await this.sql.run('DELETE FROM plan_event_properties WHERE app_id = ? AND event_type = ?', [this.appId, eventType]);
  }

  /** Removes the shared property `name` and its overrides. */
  async removeSharedEventProperty(name: string): Promise<void> {
    await this.sql.run('DELETE FROM plan_event_properties WHERE app_id = ? AND name = ? AND (event_type IS NULL OR override)', [this.appId, name]);
  }

  /** The properties of event types renamed from `from` follow the new name. */
  async renameEventTypeOfProperties(from: string, to: string): Promise<void> {
    await this.sql.run('UPDATE plan_event_properties SET event_type = ? WHERE app_id = ? AND event_type = ?', [to, this.appId, from]);
  }

  async userProperties(): Promise<PropertyDefinition[]> {
    return (await this.sql.rows('SELECT * FROM plan_user_properties WHERE app_id = ? ORDER BY name', [this.appId])).map(definitionOf);
  }

  async userProperty(name: string): Promise<PropertyDefinition | undefined> {
    const [row] = await this.sql.rows('SELECT * FROM plan_user_properties WHERE app_id = ? AND name = ?', [this.appId, name]);
    return row && definitionOf(row);
  }

  async saveUserProperty(entry: PropertyDefinition, previousName = entry.name): Promise<void> {
    await this.removeUserProperty(previousName);
    const values: SqlValue[] = [this.appId, entry.name, ...definitionValues(entry), JSON.stringify(entry.classifications)];
    await this.sql.run(`INSERT INTO plan_user_properties VALUES (${placeholders(values.length)})`, values);
  }

  async removeUserProperty(name: string): Promise<void> {
    await this.sql.run('DELETE FROM plan_user_properties WHERE app_id = ? AND name = ?', [this.appId, name]);
  }
}

export class TaxonomyStore extends EntityTables {
  /** Per project, its plan's event types as read at a version of the plan. */
  private readonly names = new Map<number, { version: number; names: Promise<EventTypeNames> }>();

  constructor(
    sql: SqlSession,
    /**
     * No other process writes the plan (DuckDB: the data directory is this process's): what is
     * kept stays until this store changes it, without asking the version on every reading, a
     * statement that waits behind a load in progress on DuckDB (every reporting request did).
     */
    private readonly soleWriter = false,
  ) {
    super(sql, TAXONOMY_TABLES);
  }

  /**
   * `work` on the project's plan in one transaction: what it throws leaves nothing written.
   * Each change counts up the plan's version, which tells every process sharing the tables
   * that what it keeps of the plan is out of date.
   */
  async change<T>(appId: number, work: (plan: TaxonomyPlan) => Promise<T>): Promise<T> {
    await this.tables();
    try {
      return await this.sql.transaction(async (tx) => {
        const result = await work(new TaxonomyPlan(tx, appId));
        await tx.run('INSERT INTO plan_versions VALUES (?, 1) ON CONFLICT (app_id) DO UPDATE SET version = plan_versions.version + 1', [appId]);
        return result;
      });
    } finally {
      if (this.soleWriter) this.names.delete(appId);
    }
  }

  /** What reporting reads of the plan's event types (kept while the plan's version stays). */
  async eventTypeNames(appId: number): Promise<EventTypeNames> {
    await this.tables();
    const known = this.soleWriter ? this.names.get(appId) : undefined;
    if (known) return known.names;
    // Read before the names: a change in between makes the kept names newer than their version, read again next time.
    const [row] = await this.sql.rows('SELECT version FROM plan_versions WHERE app_id = ?', [appId]);
    const version = Number(row?.version ?? 0);
    const kept = this.names.get(appId);
    if (kept?.version === version) return kept.names;
    const names = this.readEventTypeNames(appId);
    this.names.set(appId, { version, names });
    names.catch(() => this.names.delete(appId));
    return names;
  }

  private async readEventTypeNames(appId: number): Promise<EventTypeNames> {
    await this.tables();
    const rows = await this.sql.rows('SELECT * FROM plan_event_types WHERE app_id = ?', [appId]);
    const names: EventTypeNames = { flags: new Map(), ingestedNames: new Map() };
    for (const entry of rows.map(eventTypeOf)) {
      const ingestedName = entry.transformedFrom ?? entry.name;
      names.ingestedNames.set(entry.name, ingestedName);
      names.flags.set(ingestedName, { display: entry.displayName ?? entry.name, deleted: entry.deleted, hidden: entry.hidden.is_hidden_from_dropdowns, flowHidden: entry.hidden.is_hidden_from_pathfinder });
    }
    return names;
  }

  async categories(appId: number): Promise<EventCategory[]> {
    await this.tables();
    return (await this.sql.rows('SELECT id, name FROM event_categories WHERE app_id = ? ORDER BY id', [appId])).map((r) => ({ id: Number(r.id), name: r.name as string }));
  }

  /** Creates a category, or renames the category `id`; false when another category has the name (or `id` is unknown). */
  async saveCategory(appId: number, name: string, id?: number): Promise<boolean> {
    await this.tables();
    return this.sql.transaction(async (tx) => {
      const [taken] = await tx.rows('SELECT id FROM event_categories WHERE app_id = ? AND name = ?', [appId, name]);
      if (taken && Number(taken.id) !== id) return false;
      if (id === undefined) {
        await tx.run("INSERT INTO event_categories VALUES (nextval('event_category_ids'), ?, ?)", [appId, name]);
        return true;
      }
      const [exists] = await tx.rows('SELECT id FROM event_categories WHERE app_id = ? AND id = ?', [appId, id]);
      if (!exists) return false;
      await tx.run('UPDATE event_categories SET name = ? WHERE app_id = ? AND id = ?', [name, appId, id]);
      return true;
    });
  }

  /** Deletes a category; the event types in it are left without one. */
  async deleteCategory(appId: number, id: number): Promise<boolean> {
    await this.tables();
    return this.sql.transaction(async (tx) => {
      const [exists] = await tx.rows('SELECT id FROM event_categories WHERE app_id = ? AND id = ?', [appId, id]);
      if (!exists) return false;
      await tx.run('DELETE FROM event_categories WHERE app_id = ? AND id = ?', [appId, id]);
      await tx.run('UPDATE plan_event_types SET category_id = NULL WHERE app_id = ? AND category_id = ?', [appId, id]);
      return true;
    });
  }
}
