// Experiment evaluation with @svc/evaluation: each project's flags come from
// `<data dir>/flags/<app_id>.json` (the authoring format, set with `svc-server admin
// set-flags`), re-read when the file changes; a deployment sees the flags that it serves
// (a flag's `deployments`, or every flag that names none). /v1/vardata records `[Experiment] Assignment`
// and `[Experiment] Exposure` events through the same journal as ingestion.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  EvaluationRequestError,
  compileFlags,
  contextFromUser,
  evaluateFlags,
  flagKeysFromSdkHeader,
  flagsBody,
  sdkFlagsBody,
  sdkVardataBody,
  servedBy,
  userFromSdkHeader,
  userFromVardataQuery,
  vardataBody,
  type AuthoredFlag,
  type EvaluationFlag,
  type EvaluationVariant,
  type UserContext,
} from '@svc/evaluation';
import type { Caller, HandlerRequest, Reply } from '../http/operations.js';
import { type EventRules, toStoredEvent } from '../model/events.js';
import type { Store } from '../store/types.js';

/** `flag_keys` arrives deserialized by the spec (comma-separated form array); empty items are ignored, none = every flag. */
function wanted(flagKeys: string[] | undefined): string[] | undefined {
  const keys = flagKeys?.filter((key) => key !== '');
  return keys && keys.length > 0 ? keys : undefined;
}

/** Assignment tracking headers: `track` (default) records; `no-track` and the SDKs' `read-only` do not. */
const tracksAssignment = (header: string | undefined) => header === undefined || header === 'track';

export const flagFile = (dataDir: string, appId: number) => join(dataDir, 'flags', `${appId}.json`);

export class ExperimentService {
  private readonly cache = new Map<number, { mtimeMs: number; authored: AuthoredFlag[]; flags: EvaluationFlag[] }>();

  constructor(
    private readonly dataDir: string,
    private readonly store: Store,
    private readonly rules: EventRules,
  ) {}

  private flags(caller: Caller): EvaluationFlag[] {
    const { app_id: appId, name } = caller.deployment!;
    const file = flagFile(this.dataDir, appId);
    if (!existsSync(file)) return [];
    const { mtimeMs } = statSync(file);
    let cached = this.cache.get(appId);
    if (cached?.mtimeMs !== mtimeMs) {
      const authored = JSON.parse(readFileSync(file, 'utf8')) as AuthoredFlag[];
      cached = { mtimeMs, authored, flags: compileFlags(authored) };
      this.cache.set(appId, cached);
    }
    const { authored, flags } = cached;
    return flags.filter((_, index) => servedBy(authored[index]!, name));
  }

  /** Assignment (unless suppressed) and per-flag exposure events of one evaluation. */
  private async track(caller: Caller, user: UserContext, results: Record<string, EvaluationVariant>, assignment: boolean, exposure: boolean, receivedAt: number): Promise<void> {
    const ids = { user_id: user.user_id, device_id: user.device_id };
    if (!ids.user_id && !ids.device_id) return;
    const assigned = Object.entries(results).filter(([, r]) => typeof r.key === 'string');
    const records = [];
    if (assignment) {
      records.push({
        ...ids,
        event_type: '[Experiment] Assignment',
        event_properties: Object.fromEntries(assigned.map(([flag, r]) => [`${flag}.variant`, r.key])),
        user_properties: { $set: Object.fromEntries(assigned.map(([flag, r]) => [`[Experiment] ${flag}`, r.key])) },
      });
    }
    if (exposure) for (const [flag, r] of assigned) records.push({ ...ids, event_type: '[Experiment] Exposure', event_properties: { flag_key: flag, variant: r.key } });
    if (records.length === 0) return;
    const context = { appId: caller.deployment!.app_id, receivedAt, remoteAddress: '' };
    await this.store.append(records.map((record) => toStoredEvent(record as never, context, this.rules)));
  }

  getVariants = async (request: HandlerRequest<'getVariants'>): Promise<Reply<'getVariants'>> => {
    const { user_id, device_id, flag_keys, context } = request.query;
    let user: UserContext;
    try {
      user = userFromVardataQuery({ user_id, device_id, context: context === undefined ? undefined : JSON.stringify(context) });
    } catch (error) {
      if (error instanceof EvaluationRequestError) return { status: 400, body: { code: 400, error: error.message } };
      throw error;
    }
    const results = evaluateFlags(contextFromUser(user), this.flags(request.caller), wanted(flag_keys));
    const headers = request.headers as Record<string, string | undefined>;
    await this.track(request.caller, user, results, tracksAssignment(headers['X-Svc-Exp-Track']), headers['X-Svc-Exp-Exposure-Track'] === 'track', request.receivedAt);
    return { status: 200, body: vardataBody(results) };
  };

  listFlags = (request: HandlerRequest<'listFlags'>): Reply<'listFlags'> => {
    const keys = wanted(request.query.flag_keys);
    const flags = this.flags(request.caller).filter((flag) => !keys || keys.includes(flag.key));
    return { status: 200, body: flagsBody(flags) };
  };

  getSdkVariants = async (request: HandlerRequest<'getSdkVariants'>): Promise<Reply<'getSdkVariants'>> => {
    const headers = request.headers as Record<string, string | undefined>;
    let user: UserContext;
    let keys: string[] | undefined;
    try {
      user = userFromSdkHeader(headers['X-Amp-Exp-User']);
      keys = flagKeysFromSdkHeader(headers['X-Amp-Exp-Flag-Keys']);
    } catch (error) {
      if (error instanceof EvaluationRequestError) return { status: 400, body: { code: 400, error: error.message } };
      throw error;
    }
    const results = evaluateFlags(contextFromUser(user), this.flags(request.caller), keys);
    await this.track(request.caller, user, results, tracksAssignment(headers['X-Amp-Exp-Track']), headers['X-Amp-Exp-Exposure-Track'] === 'track', request.receivedAt);
    return { status: 200, body: sdkVardataBody(results) };
  };

  listSdkFlags = (request: HandlerRequest<'listSdkFlags'>): Reply<'listSdkFlags'> => ({ status: 200, body: sdkFlagsBody(this.flags(request.caller)) });
}
