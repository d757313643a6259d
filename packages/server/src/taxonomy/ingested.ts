// What the project's stored events say about the plan: which event types and event
// properties were ingested (the plan's kinds and the hidden flags depend on it).
import type { Dialect } from '../store/dialect.js';
import type { ReportingSource } from '../store/types.js';

export interface IngestedNames {
  eventTypes(appId: number): Promise<Set<string>>;
  /** Whether an event (of one of `eventTypes`, any when null) carried the event property. */
  hasEventProperty(appId: number, property: string, eventTypes: readonly string[] | null): Promise<boolean>;
}

export class StoredEventNames implements IngestedNames {
  constructor(
    private readonly source: ReportingSource,
    private readonly dialect: Dialect,
  ) {}

  async eventTypes(appId: number): Promise<Set<string>> {
    return new Set((await this.source.query(this.dialect.eventTypes(appId))).map((row) => String(row.event_type)));
  }

  async hasEventProperty(appId: number, property: string, eventTypes: readonly string[] | null): Promise<boolean> {
    if (eventTypes?.length === 0) return false;
    return (await this.source.query(this.dialect.eventPropertySeen(appId, property, eventTypes))).length > 0;
  }
}
