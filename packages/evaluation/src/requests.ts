// Reading the evaluation requests into an evaluation context and flag keys: the query of
// `GET /v1/vardata`, and the headers of the official SDKs' `GET /sdk/v2/vardata`.
import type { EvaluationContext, UserContext } from './format.js';

/** A request the evaluation endpoints answer with 400; `message` names what was wrong. */
export class EvaluationRequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EvaluationRequestError';
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The evaluation context of a user, as the official SDKs build it: the user under `user`, and
 * for each group type the first group name with its properties under `groups`.
 */
export function contextFromUser(user: UserContext): EvaluationContext {
  const { groups, group_properties: groupProperties, ...rest } = user;
  const context: EvaluationContext = { user: rest };
  const contextGroups: NonNullable<EvaluationContext['groups']> = {};
  for (const [groupType, names] of Object.entries(groups ?? {})) {
    const groupName = names[0];
    if (!groupName) continue;
    const properties = groupProperties?.[groupType]?.[groupName];
    contextGroups[groupType] =
      properties && Object.keys(properties).length > 0
        ? { group_name: groupName, group_properties: properties }
        : { group_name: groupName };
  }
  if (Object.keys(contextGroups).length > 0) context.groups = contextGroups;
  return context;
}

/** Comma-separated flag keys; none (an empty or missing list) means every flag. */
export function parseFlagKeysQuery(flagKeys: string | undefined): string[] | undefined {
  const keys = (flagKeys ?? '').split(',').map((key) => key.trim()).filter(Boolean);
  return keys.length > 0 ? keys : undefined;
}

/**
 * The user of `GET /v1/vardata`: `context` (a JSON user context) with `user_id` and `device_id`
 * from the query taking precedence. Throws EvaluationRequestError when `context` is not a JSON object.
 */
export function userFromVardataQuery(query: { user_id?: string; device_id?: string; context?: string }): UserContext {
  let user: UserContext = {};
  if (query.context !== undefined && query.context !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(query.context);
    } catch (error) {
      throw new EvaluationRequestError(`context is not valid JSON: ${(error as Error).message}`);
    }
    if (!isObject(parsed)) throw new EvaluationRequestError('context is not a JSON object');
    user = parsed as UserContext;
  }
  if (query.user_id) user = { ...user, user_id: query.user_id };
  if (query.device_id) user = { ...user, device_id: query.device_id };
  return user;
}

function decodeBase64UrlJson(value: string, header: string): unknown {
  const base64 = value.replace(/-/g, '+').replace(/_/g, '/');
  try {
    const binary = atob(base64.padEnd(base64.length + ((4 - (base64.length % 4)) % 4), '='));
    const bytes = Uint8Array.from(binary, (char) => char.charCodeAt(0));
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw new EvaluationRequestError(`${header} is not base64url-encoded JSON`);
  }
}

/** The user of the official SDKs' `X-Amp-Exp-User` header (base64url JSON object). */
export function userFromSdkHeader(header: string | undefined): UserContext {
  if (!header) throw new EvaluationRequestError('X-Amp-Exp-User is missing');
  const user = decodeBase64UrlJson(header, 'X-Amp-Exp-User');
  if (!isObject(user)) throw new EvaluationRequestError('X-Amp-Exp-User is not the base64url encoding of a JSON object');
  return user as UserContext;
}

/** The flag keys of the official SDKs' `X-Amp-Exp-Flag-Keys` header (base64url JSON array of strings); undefined = all. */
export function flagKeysFromSdkHeader(header: string | undefined): string[] | undefined {
  if (!header) return undefined;
  const keys = decodeBase64UrlJson(header, 'X-Amp-Exp-Flag-Keys');
  if (!Array.isArray(keys) || !keys.every((key) => typeof key === 'string')) {
    throw new EvaluationRequestError('X-Amp-Exp-Flag-Keys is not the base64url encoding of a JSON array of strings');
  }
  return keys.length > 0 ? keys : undefined;
}
