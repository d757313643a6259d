// The taxonomy's entities in the engine's own tables, per project: event categories.
import { EntityTables } from '../store/entity-tables.js';
import type { SqlSession } from '../store/types.js';

const TAXONOMY_TABLES = `
CREATE SEQUENCE IF NOT EXISTS event_category_ids START 1;
CREATE TABLE IF NOT EXISTS event_categories (id BIGINT PRIMARY KEY, app_id INTEGER, name VARCHAR);
`;

export interface EventCategory {
  id: number;
  name: string;
}

export class TaxonomyStore extends EntityTables {
  constructor(sql: SqlSession) {
    super(sql, TAXONOMY_TABLES);
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

  async deleteCategory(appId: number, id: number): Promise<boolean> {
    await this.tables();
    return this.sql.transaction(async (tx) => {
      const [exists] = await tx.rows('SELECT id FROM event_categories WHERE app_id = ? AND id = ?', [appId, id]);
      if (!exists) return false;
      await tx.run('DELETE FROM event_categories WHERE app_id = ? AND id = ?', [appId, id]);
      return true;
    });
  }
}
