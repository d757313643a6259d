// Who an event belongs to: every user and every anonymous device gets a numeric `svc_id`;
// a device that sends a `user_id` joins that user (reporting's SEMANTICS.md, "Users and
// identity"). Resolution runs in ingestion order, in batches that the store commits or
// drops together with the events they resolved.
import { OffHeapKeys } from '../shared/off-heap-keys.js';

/** A device's anonymous id and, once it sent a `user_id`, the `svc_id` of that user (as assigned: merges not applied). */
export interface DeviceIdentity {
  svcId: number;
  ownerSvcId: number | null;
}

/** A device of a batch, with its owner's `user_id` for the rows the store persists. */
interface StagedDevice extends DeviceIdentity {
  owner: string | null;
}

/** The persisted state: what the store keeps, per project. */
export interface IdentityRows {
  users: { appId: number; userId: string; svcId: number }[];
  devices: { appId: number; deviceId: string; svcId: number; owner: string | null }[];
  /** An anonymous device's id merged into the id of the user it turned out to be. */
  merges: { from: number; to: number }[];
}

type PerProject<V> = Map<number, Map<string, V>>;

function put<V>(map: PerProject<V>, appId: number, key: string, value: V): void {
  let project = map.get(appId);
  if (!project) map.set(appId, (project = new Map()));
  project.set(key, value);
}

// Value columns of the off-heap keys (svc_ids start at 1: 0 is no owner).
const SVC_ID = 0;
const OWNER_SVC_ID = 1;
const NO_OWNER = 0;

/**
 * Every project's users and devices, off the JS heap (off-heap-keys.ts): as strings in Maps,
 * every major GC of the server would trace them.
 */
export class Identities {
  /** (project, user_id) → svc_id. */
  private readonly users = new OffHeapKeys(1);
  /** (project, device_id) → svc_id, the owner's svc_id (or NO_OWNER). */
  private readonly devices = new OffHeapKeys(2);
  /** svc_id → its entry in `users` (svc_ids are unique across projects). */
  private readonly userEntries = new Map<number, number>();
  readonly merged = new Map<number, number>();

  constructor(public nextSvcId: number) {}

  static from(rows: IdentityRows, nextSvcId: number): Identities {
    const identities = new Identities(nextSvcId);
    identities.apply(rows);
    return identities;
  }

  apply(rows: IdentityRows): void {
    for (const { appId, userId, svcId } of rows.users) {
      const found = this.users.find(appId, userId);
      if (found >= 0) this.userEntries.delete(this.users.value(found, SVC_ID));
      const entry = found >= 0 ? found : this.users.add(appId, userId);
      this.users.setValue(entry, SVC_ID, svcId);
      this.userEntries.set(svcId, entry);
    }
    for (const { appId, deviceId, svcId, owner } of rows.devices) {
      const found = this.devices.find(appId, deviceId);
      const entry = found >= 0 ? found : this.devices.add(appId, deviceId);
      this.devices.setValue(entry, SVC_ID, svcId);
      this.devices.setValue(entry, OWNER_SVC_ID, owner === null ? NO_OWNER : (this.userSvcId(appId, owner) ?? NO_OWNER));
    }
    for (const { from, to } of rows.merges) this.merged.set(from, to);
  }

  /**
   * A batch of resolutions over this state; nothing changes here until `commit`. New svc_ids
   * count up from `firstSvcId` (a block drawn for the batch), else from `nextSvcId`.
   */
  begin(firstSvcId = this.nextSvcId): IdentityBatch {
    return new IdentityBatch(this, firstSvcId);
  }

  canonical(svcId: number): number {
    return this.merged.get(svcId) ?? svcId;
  }

  /** The `svc_id` assigned to a `user_id` (merges not applied). */
  userSvcId(appId: number, userId: string): number | undefined {
    const entry = this.users.find(appId, userId);
    return entry < 0 ? undefined : this.users.value(entry, SVC_ID);
  }

  device(appId: number, deviceId: string): DeviceIdentity | undefined {
    const entry = this.devices.find(appId, deviceId);
    if (entry < 0) return undefined;
    const owner = this.devices.value(entry, OWNER_SVC_ID);
    return { svcId: this.devices.value(entry, SVC_ID), ownerSvcId: owner === NO_OWNER ? null : owner };
  }

  userIdOf(appId: number, svcId: number): string | undefined {
    const entry = this.userEntries.get(svcId);
    return entry !== undefined && this.users.appIdOf(entry) === appId ? this.users.keyOf(entry) : undefined;
  }

  /** Drops deleted users: their ids, and the devices that were theirs (later events start anew). */
  forget(appId: number, svcIds: Set<number>): void {
    for (const svcId of svcIds) {
      const entry = this.userEntries.get(svcId);
      if (entry === undefined || this.users.appIdOf(entry) !== appId) continue;
      this.users.remove(entry);
      this.userEntries.delete(svcId);
    }
    for (let entry = this.devices.first; entry < this.devices.end; entry++) {
      if (!this.devices.isLive(entry) || this.devices.appIdOf(entry) !== appId) continue;
      const owner = this.devices.value(entry, OWNER_SVC_ID);
      if (svcIds.has(this.devices.value(entry, SVC_ID)) || (owner !== NO_OWNER && !this.userEntries.has(owner))) this.devices.remove(entry);
    }
  }

  /** The `svc_id` of a `user_id`, else of a `device_id` (its user's when it has one). */
  svcIdOf(appId: number, userOrDeviceId: string): number | undefined {
    return this.userSvcId(appId, userOrDeviceId) ?? this.svcIdOfDevice(appId, userOrDeviceId);
  }

  /** The `svc_id` of a `device_id`: its user's when it has one. */
  svcIdOfDevice(appId: number, deviceId: string): number | undefined {
    const device = this.device(appId, deviceId);
    return device && this.canonical(device.ownerSvcId ?? device.svcId);
  }
}

export class IdentityBatch {
  private readonly users: PerProject<number> = new Map();
  private readonly devices: PerProject<StagedDevice> = new Map();
  private readonly merges = new Map<number, number>();
  constructor(
    private readonly base: Identities,
    /** The svc_id the next new user or device gets. */
    public nextSvcId: number,
  ) {}

  private user(appId: number, userId: string): number | undefined {
    return this.users.get(appId)?.get(userId) ?? this.base.userSvcId(appId, userId);
  }

  private device(appId: number, deviceId: string): DeviceIdentity | undefined {
    return this.devices.get(appId)?.get(deviceId) ?? this.base.device(appId, deviceId);
  }

  private newSvcId(): number {
    return this.nextSvcId++;
  }

  /** The `svc_id` of an event; null for records of neither a user nor a device (group identification). */
  resolve(appId: number, userId: string | null, deviceId: string | null): number | null {
    if (userId !== null) {
      const device = deviceId === null ? undefined : this.device(appId, deviceId);
      const anonymous = device !== undefined && device.ownerSvcId === null ? device.svcId : undefined;
      let svcId = this.user(appId, userId);
      if (svcId === undefined) {
        svcId = anonymous ?? this.newSvcId();
        put(this.users, appId, userId, svcId);
      } else if (anonymous !== undefined && this.canonical(anonymous) !== svcId) {
        this.merges.set(anonymous, svcId);
      }
      // A user's svc_id is its own: the device belongs to this user exactly when it holds this svc_id as owner.
      if (deviceId !== null && device?.ownerSvcId !== svcId) put(this.devices, appId, deviceId, { svcId: device?.svcId ?? svcId, ownerSvcId: svcId, owner: userId });
      return svcId;
    }
    if (deviceId === null) return null;
    const device = this.device(appId, deviceId);
    if (device) return device.ownerSvcId ?? device.svcId;
    const svcId = this.newSvcId();
    put(this.devices, appId, deviceId, { svcId, ownerSvcId: null, owner: null });
    return svcId;
  }

  /** The id an `svc_id` counts as once merges are applied (those of this batch included). */
  canonical(svcId: number): number {
    return this.merges.get(svcId) ?? this.base.canonical(svcId);
  }

  /** What this batch adds or changes, for the store to persist. */
  changes(): IdentityRows {
    const flat = <V, R>(map: PerProject<V>, row: (appId: number, key: string, value: V) => R): R[] =>
      [...map].flatMap(([appId, entries]) => [...entries].map(([key, value]) => row(appId, key, value)));
    return {
      users: flat(this.users, (appId, userId, svcId) => ({ appId, userId, svcId })),
      devices: flat(this.devices, (appId, deviceId, { svcId, owner }) => ({ appId, deviceId, svcId, owner })),
      merges: [...this.merges].map(([from, to]) => ({ from, to })),
    };
  }

  /** Makes the batch part of the state (after the store committed it). */
  commit(): void {
    this.base.apply(this.changes());
    this.base.nextSvcId = Math.max(this.base.nextSvcId, this.nextSvcId);
  }
}
