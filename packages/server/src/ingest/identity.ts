// Who an event belongs to: every user and every anonymous device gets a numeric `svc_id`;
// a device that sends a `user_id` joins that user (reporting's SEMANTICS.md, "Users and
// identity"). Resolution runs in ingestion order, in batches that the store commits or
// drops together with the events they resolved.

/** A device's anonymous id and, once it sent a `user_id`, the user it belongs to. */
export interface DeviceIdentity {
  svcId: number;
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

function lookup<V>(maps: PerProject<V>[], appId: number, key: string): V | undefined {
  for (const map of maps) {
    const value = map.get(appId)?.get(key);
    if (value !== undefined) return value;
  }
  return undefined;
}

function put<V>(map: PerProject<V>, appId: number, key: string, value: V): void {
  let project = map.get(appId);
  if (!project) map.set(appId, (project = new Map()));
  project.set(key, value);
}

export class Identities {
  readonly users: PerProject<number> = new Map();
  readonly devices: PerProject<DeviceIdentity> = new Map();
  readonly merged = new Map<number, number>();
  /** user_id of each user's svc_id, per project. */
  private readonly userIds = new Map<number, Map<number, string>>();

  constructor(public nextSvcId: number) {}

  static from(rows: IdentityRows, nextSvcId: number): Identities {
    const identities = new Identities(nextSvcId);
    identities.apply(rows);
    return identities;
  }

  apply(rows: IdentityRows): void {
    for (const { appId, userId, svcId } of rows.users) {
      put(this.users, appId, userId, svcId);
      let names = this.userIds.get(appId);
      if (!names) this.userIds.set(appId, (names = new Map()));
      names.set(svcId, userId);
    }
    for (const { appId, deviceId, svcId, owner } of rows.devices) put(this.devices, appId, deviceId, { svcId, owner });
    for (const { from, to } of rows.merges) this.merged.set(from, to);
  }

  /** A batch of resolutions over this state; nothing changes here until `commit`. */
  begin(): IdentityBatch {
    return new IdentityBatch(this);
  }

  canonical(svcId: number): number {
    return this.merged.get(svcId) ?? svcId;
  }

  userIdOf(appId: number, svcId: number): string | undefined {
    return this.userIds.get(appId)?.get(svcId);
  }

  /** Drops deleted users: their ids, and the devices that were theirs (later events start anew). */
  forget(appId: number, svcIds: Set<number>): void {
    for (const [userId, svcId] of this.users.get(appId) ?? []) {
      if (!svcIds.has(svcId)) continue;
      this.users.get(appId)!.delete(userId);
      this.userIds.get(appId)?.delete(svcId);
    }
    const users = this.users.get(appId);
    for (const [deviceId, device] of this.devices.get(appId) ?? []) {
      const owner = device.owner === null ? undefined : users?.get(device.owner);
      if (svcIds.has(device.svcId) || (device.owner !== null && owner === undefined)) this.devices.get(appId)!.delete(deviceId);
    }
  }

  /** The `svc_id` of a `user_id`, else of a `device_id` (its user's when it has one). */
  svcIdOf(appId: number, userOrDeviceId: string): number | undefined {
    return this.users.get(appId)?.get(userOrDeviceId) ?? this.svcIdOfDevice(appId, userOrDeviceId);
  }

  /** The `svc_id` of a `device_id`: its user's when it has one. */
  svcIdOfDevice(appId: number, deviceId: string): number | undefined {
    const device = this.devices.get(appId)?.get(deviceId);
    if (!device) return undefined;
    return this.canonical(device.owner === null ? device.svcId : this.users.get(appId)!.get(device.owner)!);
  }
}

export class IdentityBatch {
  private readonly users: PerProject<number> = new Map();
  private readonly devices: PerProject<DeviceIdentity> = new Map();
  private readonly merges = new Map<number, number>();
  private nextSvcId: number;

  constructor(private readonly base: Identities) {
    this.nextSvcId = base.nextSvcId;
  }

  private user(appId: number, userId: string): number | undefined {
    return lookup([this.users, this.base.users], appId, userId);
  }

  private device(appId: number, deviceId: string): DeviceIdentity | undefined {
    return lookup([this.devices, this.base.devices], appId, deviceId);
  }

  private newSvcId(): number {
    return this.nextSvcId++;
  }

  /** The `svc_id` of an event; null for records of neither a user nor a device (group identification). */
  resolve(appId: number, userId: string | null, deviceId: string | null): number | null {
    if (userId !== null) {
      const device = deviceId === null ? undefined : this.device(appId, deviceId);
      const anonymous = device !== undefined && device.owner === null ? device.svcId : undefined;
      let svcId = this.user(appId, userId);
      if (svcId === undefined) {
        svcId = anonymous ?? this.newSvcId();
        put(this.users, appId, userId, svcId);
      } else if (anonymous !== undefined && this.canonical(anonymous) !== svcId) {
        this.merges.set(anonymous, svcId);
      }
      if (deviceId !== null && device?.owner !== userId) put(this.devices, appId, deviceId, { svcId: device?.svcId ?? svcId, owner: userId });
      return svcId;
    }
    if (deviceId === null) return null;
    let device = this.device(appId, deviceId);
    if (!device) put(this.devices, appId, deviceId, (device = { svcId: this.newSvcId(), owner: null }));
    return device.owner === null ? device.svcId : this.user(appId, device.owner)!;
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
    this.base.nextSvcId = this.nextSvcId;
  }
}
