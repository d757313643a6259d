// The user lookups (UserLookups), answered by every engine from its identities in memory.
import type { Identities } from './identity.js';
import type { UserLookups } from './types.js';

/** The entries of `keys` that `lookup` finds. */
function found<K, V>(keys: readonly K[], lookup: (key: K) => V | undefined): Map<K, V> {
  const values = new Map<K, V>();
  for (const key of keys) {
    const value = lookup(key);
    if (value !== undefined) values.set(key, value);
  }
  return values;
}

export abstract class IdentityLookups implements Pick<UserLookups, 'svcIdsOfUsers' | 'userIdsOfSvcIds' | 'svcIdsOfDevices'> {
  protected abstract identities: Identities;

  async svcIdsOfUsers(appId: number, userIds: readonly string[]): Promise<Map<string, number>> {
    return found(userIds, (userId) => this.identities.userSvcId(appId, userId));
  }

  async userIdsOfSvcIds(appId: number, svcIds: readonly number[]): Promise<Map<number, string>> {
    return found(svcIds, (svcId) => this.identities.userIdOf(appId, svcId));
  }

  async svcIdsOfDevices(appId: number, deviceIds: readonly string[]): Promise<Map<string, number>> {
    return found(deviceIds, (deviceId) => this.identities.svcIdOfDevice(appId, deviceId));
  }
}
