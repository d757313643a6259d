// The numbers every process loading into one ClickHouse database draws from, kept in the shared
// SQL store (PostgreSQL): `svc_id`s (unique across projects: merges re-point them by value) and
// `ingest_seq`s (unique too; in load order within a project, which the project's lock gives).
// A load takes a block of each under its project's lock, so loads of different projects
// need not take turns for them.
import { EntityTables } from '../entity-tables.js';
import type { SqlSession } from '../types.js';

export type ClockName = 'svc_id' | 'ingest_seq';

const SCHEMA = ['CREATE TABLE IF NOT EXISTS engine_clocks (name VARCHAR PRIMARY KEY, next BIGINT NOT NULL)'];

export class EngineClocks extends EntityTables {
  constructor(sql: SqlSession) {
    super(sql, SCHEMA);
  }

  /** Makes the clock's next number at least `next` (at open: numbers stored before the clock existed). */
  async atLeast(name: ClockName, next: number): Promise<void> {
    await this.tables();
    await this.sql.run('INSERT INTO engine_clocks VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET next = GREATEST(engine_clocks.next, excluded.next)', [name, Math.trunc(next)]);
  }

  /** The first of `count` consecutive numbers nobody else is given. */
  async take(name: ClockName, count: number): Promise<number> {
    await this.tables();
    const [row] = await this.sql.rows('UPDATE engine_clocks SET next = next + ? WHERE name = ? RETURNING next', [Math.trunc(count), name]);
    if (!row) throw new Error(`The engine clock ${name} is not set`);
    return Number(row.next) - count;
  }

  /**
   * Gives back the unused end of a block (`used` of `count` from `first`) when nobody took a
   * block after it, which keeps the numbers dense while one process loads.
   */
  async giveBack(name: ClockName, first: number, count: number, used: number): Promise<void> {
    if (used === count) return;
    await this.sql.run('UPDATE engine_clocks SET next = ? WHERE name = ? AND next = ?', [Math.trunc(first + used), name, Math.trunc(first + count)]);
  }
}
