// The tracking plan's event types as reporting reads them: what the taxonomy group keeps and
// the reporting group filters and labels by.
export interface EventTypeFlags {
  display: string;
  deleted: boolean;
  hidden: boolean;
  flowHidden: boolean;
}

/** The plan's event types as reporting sees them. */
export interface EventTypeNames {
  /** By the name their events were ingested under. */
  flags: Map<string, EventTypeFlags>;
  /** The name events were ingested under, of each event type of the plan (itself, or the one it was renamed from). */
  ingestedNames: Map<string, string>;
}
