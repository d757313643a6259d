// Event properties the DuckDB engine materializes in columns of `events` (the dialect reads a
// ready column instead of the events' properties): noted by reporting, filled in the background.
import type { DuckDBConnection } from '@duckdb/node-api';
import { BackgroundRounds } from './background-rounds.js';
import { eventPropertyText } from './dialect.js';
import { rowsOf } from './results.js';
import { quote } from './schema.js';

/** At most this many materialized properties: their names are user data, and each costs a column and a fill of every event. */
const MAX_PROPERTY_COLUMNS = 64;
/** Events per statement of a materialization's fill: loads and other writes take their turns in between. */
const FILL_CHUNK = 1_000_000;

/** An event property materialized in a column of `events` (ready once every event before it was added is filled). */
export interface PropertyColumn {
  column: string;
  ready: boolean;
}

export class MaterializedProperties {
  /** By name (`materialized_properties` as committed). */
  private readonly columns = new Map<string, PropertyColumn>();
  /** Properties noted for materialization whose column is not ready yet. */
  private readonly toMaterialize = new Set<string>();
  /** Materializes the noted properties one at a time. A failed fill ends the run; its property stays noted. */
  private readonly materializations: BackgroundRounds;

  constructor(
    private readonly connection: DuckDBConnection,
    /** Runs `work` in a transaction in turn with the engine's other work; what it returns runs after the commit. */
    private readonly transaction: (work: () => Promise<(() => void) | void>) => Promise<void>,
    /** The `ingest_seq` of the last event loaded: a new column's fill stops there, loads fill the rest. */
    private readonly lastIngestSeq: () => number,
    private readonly closing: () => boolean,
    log: (message: string) => void,
  ) {
    this.materializations = new BackgroundRounds(
      () => this.toMaterialize.size > 0 && !this.closing(),
      async () => {
        const [name] = this.toMaterialize;
        await this.materializeProperty(name!);
        this.toMaterialize.delete(name!);
      },
      // The property that failed is still the first noted.
      (error, retryInMs) => log(`materializing the event property ${JSON.stringify([...this.toMaterialize][0])} failed, tried again in ${retryInMs / 1000} s; queries read it from the events' properties meanwhile, slower: ${error.stack ?? error.message}`),
    );
  }

  /** The committed columns, at open; a fill a crash or a close interrupted is done again. */
  async open(): Promise<void> {
    for (const row of await rowsOf(this.connection, 'SELECT name, column_name, ready FROM materialized_properties')) {
      this.columns.set(row.name as string, { column: row.column_name as string, ready: row.ready as boolean });
      if (!row.ready) this.toMaterialize.add(row.name as string);
    }
    this.materializations.start();
  }

  /** Each property's column, ready or not: a load fills them for the events it inserts. */
  all(): [name: string, property: PropertyColumn][] {
    return [...this.columns];
  }

  /** Notes the properties whose column is not ready, to be filled in the background. */
  materialize(names: readonly string[]): void {
    for (const name of names) if (!this.columns.get(name)?.ready) this.toMaterialize.add(name);
    if (this.toMaterialize.size > 0) this.materializations.start();
  }

  /** Resolves once the properties noted so far are materialized (or a fill failed). */
  materialized(): Promise<void> {
    return this.materializations.ended();
  }

  /**
   * Adds the property's column (from then on loads fill it for the events they insert), fills it
   * for the events before, a chunk per transaction in turn with the loads and other writes (one
   * transaction would hold them all for the whole fill), and only then marks it ready: the
   * dialect reads a column once every event has its value.
   */
  private async materializeProperty(name: string): Promise<void> {
    let property = this.columns.get(name);
    let filledUntil = this.lastIngestSeq();
    if (!property && this.columns.size >= MAX_PROPERTY_COLUMNS) return;
    if (!property) {
      // Column names are the engine's own: the property's name is user data.
      const column = `mp_${this.columns.size + 1}`;
      await this.transaction(async () => {
        await this.connection.run(`ALTER TABLE events ADD COLUMN ${quote(column)} VARCHAR`);
        await this.connection.run('INSERT INTO materialized_properties VALUES (?, ?, false)', [name, column]);
        return () => {
          this.columns.set(name, (property = { column, ready: false }));
          filledUntil = this.lastIngestSeq();
        };
      });
    }
    const { column } = property!;
    for (let from = 0; from < filledUntil; from += FILL_CHUNK) {
      if (this.closing()) return;
      await this.transaction(async () => {
        await this.connection.run(`UPDATE events SET ${quote(column)} = ${eventPropertyText('event_properties', name)} WHERE ingest_seq > ? AND ingest_seq <= ?`, [from, Math.min(from + FILL_CHUNK, filledUntil)]);
      });
    }
    await this.transaction(async () => {
      await this.connection.run('UPDATE materialized_properties SET ready = true WHERE name = ?', [name]);
      return () => {
        property!.ready = true;
      };
    });
  }
}
