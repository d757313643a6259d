// The bodies of the evaluation endpoints, from evaluation results and flags.
import { sortByDependencies } from './engine.js';
import type {
  EvaluationFlag,
  EvaluationVariant,
  EvaluationVariants,
  FlagConfiguration,
  Variant,
  Variants,
} from './format.js';

const GROUP_FLAG_TYPES = new Set(['mutual-exclusion-group', 'holdout-group']);

/** Results of mutual exclusion and holdout groups only steer other flags; no endpoint reports them. */
const isReported = (result: EvaluationVariant): boolean =>
  !GROUP_FLAG_TYPES.has(String(result.metadata?.flagType ?? ''));

/**
 * Body of the official SDKs' `GET /sdk/v2/vardata`: every result, default variants included
 * (with `metadata.default` true), as the SDKs expect.
 */
export function sdkVardataBody(results: Record<string, EvaluationVariant>): EvaluationVariants {
  return Object.fromEntries(Object.entries(results).filter(([, result]) => isReported(result)));
}

/**
 * Body of `GET /v1/vardata` (seed 002: flag key → `{ key, value?, payload?, expKey?,
 * evaluationId? }`, `{}` when the user is in no flag's target audience). A default-variant
 * result means the user is outside the audience and is left out. `expKey` is the flag's
 * `metadata.experimentKey`; `evaluationId` the result's `metadata.evaluationId`, else
 * `options.evaluationId` (an identifier the caller gives the whole evaluation), when set.
 */
export function vardataBody(
  results: Record<string, EvaluationVariant>,
  options: { evaluationId?: string } = {},
): Variants {
  const body: Variants = {};
  for (const [flagKey, result] of Object.entries(results)) {
    if (!isReported(result) || result.metadata?.default === true || !result.key) continue;
    const variant: Variant = { key: result.key };
    if (typeof result.value === 'string') variant.value = result.value;
    if (result.payload !== undefined) variant.payload = result.payload;
    const { experimentKey, evaluationId = options.evaluationId } = result.metadata ?? {};
    if (typeof experimentKey === 'string') variant.expKey = experimentKey;
    if (typeof evaluationId === 'string') variant.evaluationId = evaluationId;
    body[flagKey] = variant;
  }
  return body;
}

/** Body of the official SDKs' `GET /sdk/v2/flags`: the flags in the evaluation format, each after its dependencies. */
export function sdkFlagsBody(flags: readonly EvaluationFlag[]): EvaluationFlag[] {
  return sortByDependencies(flags).map((flag) => structuredClone(flag));
}

/**
 * Body of `GET /v1/flags` (seed 002's flag download format): the evaluation format, which holds
 * every field seed 002 lists, with the flag metadata seed 002 requires defaulted (deployed,
 * remote evaluation, release, version 1) where a flag does not set it, and each variant's `key`
 * defaulted to its name; a `value` that is not a string is left out (seed 002 types it as one).
 */
export function flagsBody(flags: readonly EvaluationFlag[]): FlagConfiguration[] {
  return sortByDependencies(flags).map((flag) => {
    const { deployed = true, evaluationMode = 'remote', flagType = 'release', flagVersion = 1, ...rest } =
      flag.metadata ?? {};
    const variants: FlagConfiguration['variants'] = {};
    for (const [name, { value, ...variant }] of Object.entries(structuredClone(flag.variants))) {
      variants[name] = { ...variant, key: variant.key ?? name, ...(typeof value === 'string' ? { value } : {}) };
    }
    return {
      ...structuredClone(flag),
      metadata: { ...rest, deployed, evaluationMode, flagType, flagVersion },
      variants,
    };
  });
}
