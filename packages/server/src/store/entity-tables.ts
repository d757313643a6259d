// A store of entities in the engine's own tables: its CREATE statements run once, on first use.
import type { SqlSession } from './types.js';

export abstract class EntityTables {
  private ready: Promise<void> | undefined;

  constructor(
    protected readonly sql: SqlSession,
    /** One script, or statements run one by one (for sessions that prepare one statement at a time). */
    private readonly ddl: string | readonly string[],
  ) {}

  /** Creates the tables once; a failed creation is tried again on the next use. */
  protected tables(): Promise<void> {
    if (!this.ready) {
      const statements = typeof this.ddl === 'string' ? [this.ddl] : this.ddl;
      this.ready = (async () => {
        for (const statement of statements) await this.sql.run(statement);
      })();
      this.ready.catch(() => (this.ready = undefined));
    }
    return this.ready;
  }
}
