// A store of entities in the engine's own tables: its CREATE statements run once, on first use.
import type { SqlSession } from './types.js';

export abstract class EntityTables {
  private ready: Promise<void> | undefined;

  constructor(
    protected readonly sql: SqlSession,
    private readonly ddl: string,
  ) {}

  /** Creates the tables once; a failed creation is tried again on the next use. */
  protected tables(): Promise<void> {
    if (!this.ready) {
      this.ready = this.sql.run(this.ddl);
      this.ready.catch(() => (this.ready = undefined));
    }
    return this.ready;
  }
}
