// The DuckDB engine's per-user timelines (../timelines/): built in the background from a
// snapshot of the events, then kept up to date by each load's committed change; plain funnels
// and counts read them, and are SQL while a project's are not built. They are an index of every
// stored event in memory: within a budget, past which a project's are dropped (largest first)
// and its funnels and counts stay SQL until the server restarts.
import type { DuckDBConnection, DuckDBResult } from '@duckdb/node-api';
import type { FunnelGroup } from '../../model/funnel-times.js';
import { timelineCounts, type TimelineCounts, type TimelineCountsQuery } from '../timelines/counts.js';
import { FunnelThread } from '../timelines/funnel-helper.js';
import { timelineFunnel, type TimelineFunnelQuery } from '../timelines/funnel.js';
import { timelineBytes } from '../timelines/budget.js';
import { TimelineBuilder, UserTimelines } from '../timelines/timelines.js';
import { BackgroundRounds } from './background-rounds.js';
import { eachRow } from './results.js';

/** Events a load added (one array per column) and the users it merged, for the timelines. */
export interface TimelineChange {
  events: { appIds: number[]; svcIds: number[]; times: number[]; types: (string | null)[]; seqs: number[] };
  merges: { from: number; to: number }[];
}

export const noEvents = (): TimelineChange['events'] => ({ appIds: [], svcIds: [], times: [], types: [], seqs: [] });

/** The events of the temp table `segment` as the load inserted them, for the timelines (the rows reporting scans: with a user and a time). */
export async function segmentTimelineEvents(connection: DuckDBConnection, ingestSeqBase: number): Promise<TimelineChange['events']> {
  const events = noEvents();
  const result = await connection.stream(
    `SELECT s.app_id, i.svc_id::DOUBLE, s.time::DOUBLE, s.event_type, (s.seq + ${ingestSeqBase})::DOUBLE FROM segment s JOIN segment_ids i USING (seq)
     WHERE s.held_attribution IS NULL AND i.svc_id IS NOT NULL AND s.time IS NOT NULL ORDER BY s.seq`,
  );
  await eachRow(result, ([appId, svcId, time, type, seq], row) => {
    events.appIds.push(appId!.getItem(row) as number);
    events.svcIds.push(svcId!.getItem(row) as number);
    events.times.push(time!.getItem(row) as number);
    events.types.push(type!.getItem(row) as string | null);
    events.seqs.push(seq!.getItem(row) as number);
  });
  return events;
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;

export class EngineTimelines {
  /** Per project and user, the events as timelines (plain funnels read them). */
  private readonly timelines = new UserTimelines();
  /** Projects whose timelines are to be built (at open, or after a change they cannot follow): their funnels are SQL meanwhile. */
  private readonly unbuilt = new Set<number>();
  /** Projects whose timelines passed the budget: SQL from then on, never built again. */
  private readonly overBudget = new Set<number>();
  /** While a build reads its snapshot: the changes loads made since, replayed on what it built. */
  private changesDuringBuild?: TimelineChange[];
  /** While a build runs: the projects forgotten since it started (what it read of them is stale). */
  private forgottenDuringBuild?: Set<number>;
  /** Builds the timelines of the projects to build; a failed round leaves them to SQL. */
  private readonly builds: BackgroundRounds;
  /** Tallies half of a large funnel's users. */
  private readonly funnelThread: FunnelThread;

  constructor(
    /** The builds' connection: a long read of its own. */
    private readonly builder: DuckDBConnection,
    /** Runs work in turn with the engine's loads (a build's snapshot is taken between two). */
    private readonly serial: <T>(work: () => Promise<T>) => Promise<T>,
    private readonly closing: () => boolean,
    private readonly log: (message: string) => void,
    /** The most bytes every project's timelines together may hold; 0: none are kept. */
    private readonly budgetBytes: number,
  ) {
    this.funnelThread = new FunnelThread(log);
    this.builds = new BackgroundRounds(
      () => this.unbuilt.size > 0 && !this.closing(),
      () => this.buildRound(),
      (error, retryInMs) => log(`building the reporting timelines failed, tried again in ${retryInMs / 1000} s; funnels and counts of the projects not built are answered by SQL meanwhile, slower: ${error.stack ?? error.message}`),
    );
  }

  /** Builds these projects' timelines in the background: funnels are SQL until then (`built`). */
  build(appIds: Iterable<number>): void {
    for (const appId of appIds) if (this.kept(appId)) this.unbuilt.add(appId);
    this.builds.start();
  }

  /** A committed change of events, on the timelines (and recorded for the build that runs, if any). */
  change(change: TimelineChange): void {
    this.changesDuringBuild?.push(change);
    this.applyChange(change, (appId) => this.kept(appId) && !this.unbuilt.has(appId));
    this.keepWithinBudget();
  }

  /** After a change of a project's events the timelines cannot follow: built again from the table. */
  forget(appId: number): void {
    this.timelines.forget(appId);
    this.forgottenDuringBuild?.add(appId);
    this.build([appId]);
  }

  /** A plain funnel from the project's timelines; undefined while they are not built. */
  async funnel(query: TimelineFunnelQuery): Promise<FunnelGroup[] | undefined> {
    if (this.unbuilt.has(query.appId) || !this.kept(query.appId)) return undefined;
    return timelineFunnel(this.timelines.project(query.appId), query, this.funnelThread);
  }

  /** Plain counts from the project's timelines; undefined while they are not built. */
  async counts(query: TimelineCountsQuery): Promise<TimelineCounts | undefined> {
    if (this.unbuilt.has(query.appId) || !this.kept(query.appId)) return undefined;
    return timelineCounts(this.timelines.project(query.appId), query);
  }

  /** Resolves once no build runs; rejects when the one it waited for failed. */
  built(): Promise<void> {
    return this.builds.ended();
  }

  closeFunnelThread(): Promise<void> {
    return this.funnelThread.close();
  }

  /** Whether the project's timelines are kept (built or to be built). */
  private kept(appId: number): boolean {
    return this.budgetBytes > 0 && !this.overBudget.has(appId);
  }

  /** Drops the largest projects' timelines while all of them hold more than the budget. */
  private keepWithinBudget(): void {
    const sizes = [...this.timelines.entries()].map(([appId, project]) => ({ appId, bytes: timelineBytes(project) })).sort((a, b) => b.bytes - a.bytes);
    let total = sizes.reduce((sum, { bytes }) => sum + bytes, 0);
    for (const { appId, bytes } of sizes) {
      if (total <= this.budgetBytes) break;
      this.dropOverBudget(appId, `${mb(bytes)}`);
      total -= bytes;
    }
  }

  /** `size`: what the project's timelines hold, or would. */
  private dropOverBudget(appId: number, size: string): void {
    this.timelines.forget(appId);
    this.unbuilt.delete(appId);
    this.overBudget.add(appId);
    this.log(`the timelines of project ${appId} (${size}) pass the memory budget for timelines (${mb(this.budgetBytes)}, --timeline-memory): dropped; its funnels and counts are answered by SQL, slower, until the server restarts with a larger budget`);
  }

  /** The change's events of the projects `kept`, then its merges (in the order of the load's SQL). */
  private applyChange({ events, merges }: TimelineChange, kept: (appId: number) => boolean): void {
    for (let i = 0; i < events.appIds.length; i++) {
      if (kept(events.appIds[i]!)) this.timelines.append(events.appIds[i]!, events.svcIds[i]!, events.times[i]!, events.types[i]!, events.seqs[i]!);
    }
    for (const { from, to } of merges) this.timelines.merge(from, to);
  }

  /**
   * The timelines of the projects to build, from a snapshot of the events ordered by user, time
   * and ingestion, read in columnar chunks while loads go on: the snapshot is taken between two
   * loads, and the loads committed after it are replayed on what it built.
   */
  private async buildRound(): Promise<void> {
    const appIds = [...this.unbuilt];
    const builders = new Map(appIds.map((appId) => [appId, { builder: new TimelineBuilder(this.budgetBytes), typeIds: new Map<number, number>() }]));
    const changes: TimelineChange[] = [];
    const forgotten = new Set<number>();
    const ofProjects = `app_id IN (${appIds.join(', ')})`;
    let names: (string | null)[] = [];
    let result: DuckDBResult | undefined;
    await this.serial(async () => {
      await this.builder.run('BEGIN TRANSACTION');
      try {
        names = (await this.builder.runAndReadAll(`SELECT DISTINCT event_type FROM events WHERE ${ofProjects} AND event_type IS NOT NULL`)).getRowObjectsJS().map((row) => row.event_type as string);
        // Event types as numbers (a join on the list of names): fewer strings to read than one per event.
        result = await this.builder.stream(
          `SELECT e.app_id, e.svc_id::DOUBLE, e.time::DOUBLE, t.id::INTEGER, e.ingest_seq::DOUBLE FROM events e
           LEFT JOIN (SELECT unnest(range(len(l))) AS id, unnest(l) AS name FROM (SELECT ?::VARCHAR[] AS l)) t ON t.name = e.event_type
           WHERE e.${ofProjects} AND e.svc_id IS NOT NULL AND e.time IS NOT NULL ORDER BY e.svc_id, e.time, e.ingest_seq`,
          [JSON.stringify(names)],
        );
      } catch (error) {
        await this.builder.run('ROLLBACK');
        throw error;
      }
      this.changesDuringBuild = changes;
      this.forgottenDuringBuild = forgotten;
    });
    try {
      await eachRow(
        result!,
        ([appId, svcId, time, type, seq], row) => {
          const { builder, typeIds } = builders.get(appId!.getItem(row) as number)!;
          const nameId = (type!.getItem(row) as number | null) ?? -1;
          let typeId = typeIds.get(nameId);
          if (typeId === undefined) typeIds.set(nameId, (typeId = builder.project.typeId(names[nameId] ?? null)));
          builder.add(svcId!.getItem(row) as number, time!.getItem(row) as number, typeId, seq!.getItem(row) as number);
        },
        () => this.closing(),
      );
      if (this.closing()) return;
      for (const appId of appIds.filter((appId) => builders.get(appId)!.builder.exceeded)) this.dropOverBudget(appId, `more than ${mb(this.budgetBytes)}`);
      const built = new Set(appIds.filter((appId) => !forgotten.has(appId) && this.kept(appId)));
      for (const appId of built) {
        this.timelines.install(appId, builders.get(appId)!.builder.finish());
        this.unbuilt.delete(appId);
      }
      for (const change of changes) this.applyChange(change, (appId) => built.has(appId));
      this.keepWithinBudget();
    } finally {
      this.changesDuringBuild = undefined;
      this.forgottenDuringBuild = undefined;
      await this.builder.run('ROLLBACK');
    }
  }
}
