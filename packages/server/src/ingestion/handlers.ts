// Handlers of the ingestion group: event uploads (`/2/httpapi`, `/batch`) and group
// identification. An accepted request is acknowledged once its events are in the journal.
import type { RequestProblem } from '@svc/openapi-validation';
import type { components } from '../generated/ingestion.js';
import type { HandlerRequest, Reply } from '../http/operations.js';
import { InsertIdWindow } from './dedupe.js';
import { type EventRules, type UploadRequest, toStoredEvent, uploadProblems } from '../model/events.js';
import { PropertyUpdateLimit } from './property-updates.js';
import { tooManyItems } from '../http/too-many-items.js';
import type { Throttle, ThrottleVerdict } from './throttle.js';
import { eachInSlices, type Slicer, timeSlicer, yieldToEventLoop } from '../shared/time-slice.js';
import type { Store, StoredEvent } from '../store/types.js';

type UploadOperation = 'createBatchEvents' | 'createHttpApiEvents';
type GroupIdentification = components['schemas']['GroupIdentification'];

/** What ingesting an upload needs of its request. */
type IngestRequest = Pick<HandlerRequest<UploadOperation>, 'caller' | 'receivedAt' | 'remoteAddress'>;

/** An upload refused as a whole: its 400 or 429 answer, in the batch upload's shapes. */
export type Refusal = Extract<Reply<UploadOperation>, { status: 400 | 429 }>;

/** An admitted batch: its events stored now, the insert_ids they reserved, and their journal write. */
interface Admitted {
  fresh: StoredEvent[];
  reserved: string[];
  /** Events of the batch, duplicates included. */
  ingested: number;
  written: Promise<void>;
}

export class IngestionService {
  readonly insertIds: InsertIdWindow;
  readonly propertyUpdates: PropertyUpdateLimit;
  /** The work of the last request to arrive (see `inTurn`). */
  private turns: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: Store,
    readonly throttle: Throttle,
    private readonly rules: EventRules,
    /** Sees every accepted batch once it is durable (attribution matching). */
    private readonly onAccepted: (events: StoredEvent[], now: number) => Promise<void> = async () => undefined,
    /** Where a batch's work gives way to the event loop. */
    private readonly slicer: () => Slicer = timeSlicer,
  ) {
    this.insertIds = new InsertIdWindow(rules.insertIdWindowMs);
    this.propertyUpdates = new PropertyUpdateLimit({ perHour: rules.maxUserPropertyUpdatesPerHour });
  }

  /** Refills the dedupe window from the store (at start-up, after the journal replay). */
  async rebuildInsertIds(now: number): Promise<void> {
    for await (const chunk of this.store.recentInsertIds(now - this.rules.insertIdWindowMs)) {
      for (const [appId, insertId, receivedAt] of chunk) this.insertIds.add(appId, insertId, receivedAt);
    }
  }

  prune(now: number): void {
    this.insertIds.prune(now);
    this.throttle.prune(now);
    this.propertyUpdates.prune(now);
  }

  /** 413 when the events break the spec's `maxItems` (2000), else the documented 400 body. */
  rejectUpload = (problems: RequestProblem[], body: unknown): Reply<UploadOperation> => {
    const tooMany = tooManyItems(problems);
    if (tooMany?.path === '/events') return { status: 413, body: { code: 413, error: `Payload too large: at most ${tooMany.limit} events per request` } };
    return { status: 400, body: uploadProblems(body, problems, this.rules) ?? { code: 400, error: 'Invalid request' } };
  };

  /** 400 with the throttling detail when a device of the request is silenced, else 429. */
  private refusal(verdict: ThrottleVerdict): Refusal {
    const { silenced_devices, silenced_events, throttled_users, exceeded_daily_quota_users, ...perDevice } = verdict;
    const eps_threshold = this.throttle.limits.epsThreshold;
    if (silenced_devices.length === 0) {
      return { status: 429, body: { code: 429, error: 'Too many requests for some devices and users', eps_threshold, throttled_users, exceeded_daily_quota_users, ...perDevice } };
    }
    return {
      status: 400,
      body: {
        code: 400,
        error: `Silenced devices: they kept sending within ${this.throttle.limits.silenceSeconds} seconds of being throttled; wait before retrying`,
        eps_threshold,
        silenced_devices,
        silenced_events,
        ...perDevice,
      },
    };
  }

  /**
   * Runs `work` once the work of the requests that arrived before has run. A batch is worked
   * on a slice at a time, with turns of the event loop in between (where other requests are
   * read and parsed): its throttle counts, insert_id reservations and journal lines still come
   * before those of any batch that arrived after it. `work` ends once its lines are queued in
   * the journal; the wait for them to be durable is the caller's.
   */
  private inTurn<T extends object>(work: () => Promise<T>): Promise<T> {
    const done = this.turns.then(work);
    this.turns = done.catch(() => undefined);
    return done;
  }

  upload = async (request: HandlerRequest<UploadOperation>): Promise<Reply<UploadOperation>> => {
    const outcome = await this.ingest(request, request.body as UploadRequest);
    if ('status' in outcome) return outcome;
    return {
      status: 200,
      body: { code: 200, events_ingested: outcome.ingested, payload_size_bytes: request.payloadBytes, server_upload_time: request.receivedAt },
    };
  };

  /**
   * Stores an upload's events (the events of the batch upload, of a legacy SDK or of the
   * Identify API) once they are durable: the refusal, or how many events were ingested.
   */
  async ingest(request: IngestRequest, upload: UploadRequest): Promise<Refusal | { ingested: number }> {
    const admitted = await this.inTurn(() => this.admit(request, upload));
    if ('status' in admitted) return admitted;
    const { fresh, reserved, written } = admitted;
    const appId = request.caller.project!.app_id;
    try {
      // Also when everything was a duplicate: the answer then waits for the earlier
      // writes in the journal, so a retry is never acknowledged before the original.
      await written;
    } catch (failure) {
      for (const insertId of reserved) this.insertIds.delete(appId, insertId);
      throw failure;
    }
    await this.onAccepted(fresh, request.receivedAt);
    return { ingested: admitted.ingested };
  }

  /** Judges a batch and journals its fresh events, in its turn: the refusal, or what was journalled. */
  private async admit(request: IngestRequest, body: UploadRequest): Promise<Refusal | Admitted> {
    // The request was parsed and validated in this turn of the event loop: the batch's work starts on the next.
    await yieldToEventLoop();
    const invalid = uploadProblems(body, [], this.rules);
    if (invalid) return { status: 400, body: invalid };
    const appId = request.caller.project!.app_id;
    const context = { appId, receivedAt: request.receivedAt, remoteAddress: request.remoteAddress };
    const slice = this.slicer();
    const events: StoredEvent[] = [];
    await eachInSlices(body.events, (event) => events.push(toStoredEvent(event, context, this.rules)), slice);
    const verdict = this.throttle.admit(appId, events, request.receivedAt);
    if (verdict) return this.refusal(verdict);
    // Reserved in the batch's turn: a concurrent retry of the same batch, whose turn comes
    // after, sees them reserved and stores nothing twice.
    const fresh: StoredEvent[] = [];
    const reserved: string[] = [];
    await eachInSlices(
      events,
      (event) => {
        if (event.insert_id !== null) {
          if (!this.insertIds.add(appId, event.insert_id, request.receivedAt)) return;
          reserved.push(event.insert_id);
        }
        fresh.push(event);
      },
      slice,
    );
    this.propertyUpdates.apply(fresh, request.receivedAt);
    return { fresh, reserved, ingested: events.length, written: this.store.append(fresh) };
  }

  groupIdentify = async (request: HandlerRequest<'createGroupIdentifications'>): Promise<Reply<'createGroupIdentifications'>> => {
    const identification = request.body.identification as GroupIdentification | GroupIdentification[];
    const items = Array.isArray(identification) ? identification : [identification];
    const appId = request.caller.project!.app_id;
    // Journalled as `$groupidentify` records without user or device, like the event of
    // that type, so that one path (journal → engine) applies every group change.
    const records = items.map((item) =>
      toStoredEvent(
        { event_type: '$groupidentify', groups: { [item.group_type]: item.group_value }, group_properties: item.group_properties } as never,
        { appId, receivedAt: request.receivedAt, remoteAddress: request.remoteAddress },
        this.rules,
      ),
    );
    const { written } = await this.inTurn(async () => ({ written: this.store.append(records) }));
    await written;
    return { status: 200, body: { code: 200, identifications_ingested: items.length, server_upload_time: request.receivedAt } };
  };
}
