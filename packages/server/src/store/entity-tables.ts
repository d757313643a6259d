// A store of entities in the engine's own tables: its CREATE statements run once, on first use.
import type { SqlSession } from './types.js';

export abstract class EntityTables {
  private ready: Promise<void> | undefined;

  constructor(
    protected readonly sql: SqlSession,
    private readonly ddl: string,
  ) {}

  protected tables(): Promise<void> {
    return (this.ready ??= this.sql.run(this.ddl));
  }
}
