// A store's tables are created on first use; a creation that failed (a busy database, a
// dropped connection) is tried again on the next use instead of failing every later call.
import { expect, test } from 'vitest';
import { EntityTables } from '../../src/store/entity-tables.js';
import type { SqlSession } from '../../src/store/types.js';

class Things extends EntityTables {
  count(): Promise<void> {
    return this.tables();
  }
}

test('a failed creation of the tables is tried again on the next use, a successful one is not', async () => {
  const scripts: string[] = [];
  let failures = 1;
  const session: SqlSession = {
    rows: async () => [],
    run: async (sql) => {
      scripts.push(sql);
      if (failures-- > 0) throw new Error('database is busy');
    },
    transaction: (work) => work(session),
  };
  const things = new Things(session, 'CREATE TABLE IF NOT EXISTS things (id INTEGER)');
  await expect(things.count()).rejects.toThrow('database is busy');
  await things.count();
  await things.count();
  expect(scripts).toHaveLength(2);
});
