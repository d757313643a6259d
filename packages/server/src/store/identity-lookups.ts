// The EntityStore's id lookups, answered by every engine from its identities in memory.
import type { Identities } from '../ingest/identity.js';
import type { EntityStore } from './types.js';

export abstract class IdentityLookups implements Pick<EntityStore, 'svcIdOfUser' | 'userIdOfSvcId' | 'svcIdOfDevice'> {
  protected abstract identities: Identities;

  svcIdOfUser(appId: number, userId: string): number | undefined {
    return this.identities.userSvcId(appId, userId);
  }

  userIdOfSvcId(appId: number, svcId: number): string | undefined {
    return this.identities.userIdOf(appId, svcId);
  }

  svcIdOfDevice(appId: number, deviceId: string): number | undefined {
    return this.identities.svcIdOfDevice(appId, deviceId);
  }
}
