// Annotations and their categories in the engine's own tables (per project; ids unique
// across projects). Times are kept as sent, and as epoch ms for the list filters.
import { EntityTables } from '../store/entity-tables.js';
import type { SqlSession } from '../store/types.js';
import { instant } from '../model/time.js';

export const ANNOTATION_TABLES = `
CREATE SEQUENCE IF NOT EXISTS annotation_ids START 1;
CREATE TABLE IF NOT EXISTS annotation_categories (id BIGINT PRIMARY KEY, app_id INTEGER, name VARCHAR);
CREATE TABLE IF NOT EXISTS annotations (id BIGINT PRIMARY KEY, app_id INTEGER, label VARCHAR, start_at VARCHAR, start_ms BIGINT, end_at VARCHAR, end_ms BIGINT, details VARCHAR, chart_id VARCHAR, category_id BIGINT);
`;

export interface Category {
  id: number;
  name: string;
}

export interface StoredAnnotation {
  id: number;
  label: string;
  start: string;
  end: string | null;
  details: string | null;
  chart_id: string | null;
  category: Category | null;
}

export interface AnnotationFilter {
  categoryId?: number;
  chartId?: string;
  /** Only annotations starting at or after (ms). */
  afterMs?: number;
  /** Only annotations ending (or, without end, starting) before (ms). */
  beforeMs?: number;
}

/** A field change of an update: absent keys keep their value, null clears (end, details, chart_id). */
export type AnnotationChange = Partial<{ label: string; start: string; end: string | null; details: string | null; chart_id: string | null; categoryId: number }>;

const SELECT = `SELECT a.id, a.label, a.start_at, a.end_at, a.details, a.chart_id, c.id AS category_id, c.name AS category_name
  FROM annotations a LEFT JOIN annotation_categories c ON c.id = a.category_id`;

function annotationOf(row: Record<string, unknown>): StoredAnnotation {
  return {
    id: row.id as number,
    label: row.label as string,
    start: row.start_at as string,
    end: (row.end_at as string | null) ?? null,
    details: (row.details as string | null) ?? null,
    chart_id: (row.chart_id as string | null) ?? null,
    category: row.category_id === null || row.category_id === undefined ? null : { id: row.category_id as number, name: row.category_name as string },
  };
}

export class AnnotationStore extends EntityTables {
  constructor(sql: SqlSession) {
    super(sql, ANNOTATION_TABLES);
  }

  async categories(appId: number, name?: string): Promise<Category[]> {
    await this.tables();
    const rows = await this.sql.rows(`SELECT id, name FROM annotation_categories WHERE app_id = ?${name === undefined ? '' : ' AND name = ?'} ORDER BY id`, name === undefined ? [appId] : [appId, name]);
    return rows.map((r) => ({ id: r.id as number, name: r.name as string }));
  }

  async category(appId: number, id: number): Promise<Category | undefined> {
    await this.tables();
    const [row] = await this.sql.rows('SELECT id, name FROM annotation_categories WHERE app_id = ? AND id = ?', [appId, id]);
    return row && { id: row.id as number, name: row.name as string };
  }

  /** Creates a category, or renames one (`id`); undefined when another category has the name. */
  async saveCategory(appId: number, name: string, id?: number): Promise<Category | undefined> {
    await this.tables();
    return this.sql.transaction(async (tx) => {
      const [taken] = await tx.rows('SELECT id FROM annotation_categories WHERE app_id = ? AND name = ? AND id <> ?', [appId, name, id ?? -1]);
      if (taken) return undefined;
      if (id !== undefined) {
        await tx.run('UPDATE annotation_categories SET name = ? WHERE app_id = ? AND id = ?', [name, appId, id]);
        return { id, name };
      }
      const [created] = await tx.rows("INSERT INTO annotation_categories VALUES (nextval('annotation_ids'), ?, ?) RETURNING id", [appId, name]);
      return { id: created!.id as number, name };
    });
  }

  /** Deletes a category; its annotations stay, without category. False when there is none. */
  async deleteCategory(appId: number, id: number): Promise<boolean> {
    await this.tables();
    return this.sql.transaction(async (tx) => {
      const deleted = await tx.rows('DELETE FROM annotation_categories WHERE app_id = ? AND id = ? RETURNING id', [appId, id]);
      await tx.run('UPDATE annotations SET category_id = NULL WHERE app_id = ? AND category_id = ?', [appId, id]);
      return deleted.length > 0;
    });
  }

  async annotations(appId: number, filter: AnnotationFilter): Promise<StoredAnnotation[]> {
    await this.tables();
    const conditions: [string, string | number | undefined][] = [
      ['a.app_id = ?', appId],
      ['a.category_id = ?', filter.categoryId],
      ['a.chart_id = ?', filter.chartId],
      ['a.start_ms >= ?', filter.afterMs],
      ['coalesce(a.end_ms, a.start_ms) < ?', filter.beforeMs],
    ];
    const given = conditions.filter(([, value]) => value !== undefined);
    return (await this.sql.rows(`${SELECT} WHERE ${given.map(([sql]) => sql).join(' AND ')} ORDER BY a.start_ms, a.id`, given.map(([, value]) => value!))).map(annotationOf);
  }

  async annotation(appId: number, id: number): Promise<StoredAnnotation | undefined> {
    await this.tables();
    const [row] = await this.sql.rows(`${SELECT} WHERE a.app_id = ? AND a.id = ?`, [appId, id]);
    return row && annotationOf(row);
  }

  async createAnnotation(appId: number, fields: { label: string; start: string; end?: string; details?: string; chart_id?: string; categoryId?: number }): Promise<StoredAnnotation> {
    await this.tables();
    const [created] = await this.sql.rows(
      "INSERT INTO annotations VALUES (nextval('annotation_ids'), ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
      [appId, fields.label, fields.start, instant(fields.start), fields.end ?? null, fields.end === undefined ? null : instant(fields.end), fields.details ?? null, fields.chart_id ?? null, fields.categoryId ?? null],
    );
    return (await this.annotation(appId, created!.id as number))!;
  }

  async updateAnnotation(appId: number, id: number, change: AnnotationChange): Promise<void> {
    const columns: [string, string | number | null][] = [];
    if (change.label !== undefined) columns.push(['label', change.label]);
    if (change.start !== undefined) columns.push(['start_at', change.start], ['start_ms', instant(change.start)]);
    if (change.end !== undefined) columns.push(['end_at', change.end], ['end_ms', change.end === null ? null : instant(change.end)]);
    if (change.details !== undefined) columns.push(['details', change.details]);
    if (change.chart_id !== undefined) columns.push(['chart_id', change.chart_id]);
    if (change.categoryId !== undefined) columns.push(['category_id', change.categoryId]);
    if (columns.length === 0) return;
    await this.sql.run(`UPDATE annotations SET ${columns.map(([c]) => `${c} = ?`).join(', ')} WHERE app_id = ? AND id = ?`, [...columns.map(([, v]) => v), appId, id]);
  }

  async deleteAnnotation(appId: number, id: number): Promise<boolean> {
    await this.tables();
    return (await this.sql.rows('DELETE FROM annotations WHERE app_id = ? AND id = ? RETURNING id', [appId, id])).length > 0;
  }

  /** Puts the annotations into the category, all or none: false when one is not the project's. */
  async assignCategory(appId: number, categoryId: number, annotationIds: number[]): Promise<boolean> {
    await this.tables();
    return this.sql.transaction(async (tx) => {
      const ids = [...new Set(annotationIds)];
      const found = await tx.rows(`SELECT id FROM annotations WHERE app_id = ? AND id IN (${ids.map(() => '?').join(', ')})`, [appId, ...ids]);
      if (found.length !== ids.length) return false;
      await tx.run(`UPDATE annotations SET category_id = ? WHERE app_id = ? AND id IN (${ids.map(() => '?').join(', ')})`, [categoryId, appId, ...ids]);
      return true;
    });
  }
}
