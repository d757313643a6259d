// The authoring format of the admin command's flag file, compiled into the evaluation format so
// that nobody writes hash ranges by hand. See README.md ("Authoring format").
import type {
  EvaluationAllocation,
  EvaluationCondition,
  EvaluationFlag,
  EvaluationOperator,
  EvaluationSegment,
  EvaluationVariant,
} from './format.js';

/** Distribution ranges are out of this many slots: floor(2^32 / 100) + 1, so every `Math.floor(hash / 100)` falls in one. */
export const DISTRIBUTION_SLOTS = 42949673;
/** The variant of users outside every rule and rollout, added unless the flag defines its own. */
export const OFF_VARIANT = 'off';

export type AuthoredVariant = {
  /** Any JSON value delivered with the variant. */
  payload?: unknown;
  /** Relative share of the rolled-out users (default 1); weights of a flag need not add up to 100. */
  weight?: number;
};

export type AuthoredCondition = {
  /**
   * A user field (`user_id`, `device_id`, `country`, `platform`, `version`, …), a user property
   * as `user_properties.<name>`, a group as `groups.<type>.group_name`, or another flag's variant
   * as `flags.<flag key>` (which makes the flag depend on it).
   */
  property: string;
  op: EvaluationOperator;
  values: ReadonlyArray<string | number | boolean>;
};

export type AuthoredRule = {
  /** Shown as the result's `metadata.segmentName`. */
  name?: string;
  /** All must hold. */
  when: readonly AuthoredCondition[];
  /** Everyone matching gets this variant; otherwise the rule splits by `rollout` and the variant weights. */
  variant?: string;
  /** Percentage (integer 0–100) of the matching users who get a variant; default 100. */
  rollout?: number;
  /** Weights for this rule, overriding the flag's variant weights. */
  weights?: Readonly<Record<string, number>>;
};

export type AuthoredFlag = {
  key: string;
  /** `release` (feature flag, default) or `experiment`. */
  type?: 'release' | 'experiment';
  /** Variant key → variant; order is kept. `off` is added as the default variant unless given. */
  variants: Readonly<Record<string, AuthoredVariant>>;
  /** Percentage (integer 0–100) of all users outside the rules who get a variant; default 100. */
  rollout?: number;
  /** Targeting rules, tried in order before the rollout to everyone else. */
  rules?: readonly AuthoredRule[];
  /** User field the split hashes: `device_id` (default) or `user_id`. */
  bucketBy?: 'device_id' | 'user_id';
  /** Salt of the hash; default the flag key. Change it to reshuffle assignments. */
  salt?: string;
  /** Reported as `expKey` by `GET /v1/vardata`. */
  experimentKey?: string;
  /** Stored as `metadata.flagVersion`; default 1. */
  version?: number;
  /** Names of the project's deployments that serve the flag; every deployment when absent. */
  deployments?: readonly string[];
};

/** An authored flag that cannot be compiled; `path` points at the offending field. */
export class AuthoringError extends Error {
  constructor(
    readonly path: string,
    problem: string,
  ) {
    super(`${path}: ${problem}`);
    this.name = 'AuthoringError';
  }
}

const FLAG_PREFIX = 'flags.';

function selectorOf(property: string): string[] {
  if (property.startsWith(FLAG_PREFIX)) return ['result', property.slice(FLAG_PREFIX.length), 'key'];
  if (property.startsWith('groups.')) return ['context', ...property.split('.')];
  return ['context', 'user', ...property.split('.')];
}

function checkPercent(value: number, path: string): number {
  if (!Number.isInteger(value) || value < 0 || value > 100) {
    throw new AuthoringError(path, `must be an integer percentage from 0 to 100, not ${value}`);
  }
  return value;
}

function checkRegex(pattern: string, path: string): void {
  try {
    new RegExp(pattern);
  } catch (error) {
    throw new AuthoringError(path, `"${pattern}" is not a regular expression: ${(error as Error).message}`);
  }
}

/** Splits DISTRIBUTION_SLOTS among the variants in proportion to their weights, in order, without gaps. */
function distributions(weights: ReadonlyArray<[string, number]>, path: string) {
  const total = weights.reduce((sum, [, weight]) => sum + weight, 0);
  if (weights.some(([, weight]) => !(weight >= 0)) || !(total > 0)) {
    throw new AuthoringError(path, 'weights must be non-negative numbers with a positive sum');
  }
  let cumulative = 0;
  let start = 0;
  return weights.flatMap(([variant, weight]) => {
    cumulative += weight;
    const end = Math.round((DISTRIBUTION_SLOTS * cumulative) / total);
    const range = [start, end];
    start = end;
    return weight > 0 ? [{ variant, range }] : [];
  });
}

export function compileFlag(flag: AuthoredFlag): EvaluationFlag {
  const path = flag.key || '(flag without key)';
  if (!flag.key) throw new AuthoringError(path, 'key is required');
  const authoredKeys = Object.keys(flag.variants);
  const splitKeys = authoredKeys.filter((key) => key !== OFF_VARIANT);
  if (splitKeys.length === 0) throw new AuthoringError(`${path}.variants`, 'needs at least one variant besides `off`');
  const knownVariant = (key: string, at: string) => {
    if (key !== OFF_VARIANT && !authoredKeys.includes(key)) throw new AuthoringError(at, `unknown variant "${key}"`);
    return key;
  };
  const selector = ['context', 'user', flag.bucketBy ?? 'device_id'];
  const salt = flag.salt ?? flag.key;
  const flagWeights = splitKeys.map((key): [string, number] => [key, flag.variants[key]!.weight ?? 1]);

  const split = (rollout: number, weights: ReadonlyArray<[string, number]>, at: string): EvaluationSegment => {
    const allocations: EvaluationAllocation[] = [
      { range: [0, checkPercent(rollout, `${at}.rollout`)], distributions: distributions(weights, `${at}.weights`) },
    ];
    return { bucket: { selector, salt, allocations }, variant: OFF_VARIANT };
  };

  const dependencies = new Set<string>();
  const ruleSegments = (flag.rules ?? []).map((rule, index): EvaluationSegment => {
    const at = `${path}.rules[${index}]`;
    const conditions: EvaluationCondition[] = rule.when.map((condition, conditionIndex) => {
      if (condition.property.startsWith(FLAG_PREFIX)) dependencies.add(condition.property.slice(FLAG_PREFIX.length));
      const values = condition.values.map(String);
      if (condition.op.startsWith('regex')) values.forEach((value) => checkRegex(value, `${at}.when[${conditionIndex}].values`));
      return { selector: selectorOf(condition.property), op: condition.op, values };
    });
    const outcome: EvaluationSegment =
      rule.variant !== undefined
        ? { variant: knownVariant(rule.variant, `${at}.variant`) }
        : split(
            rule.rollout ?? 100,
            rule.weights
              ? Object.entries(rule.weights).map(([key, weight]): [string, number] => [knownVariant(key, `${at}.weights`), weight])
              : flagWeights,
            at,
          );
    return { metadata: { segmentName: rule.name ?? `Rule ${index + 1}` }, conditions: [conditions], ...outcome };
  });
  if (dependencies.has(flag.key)) throw new AuthoringError(`${path}.rules`, 'a flag cannot depend on itself');

  const variants: Record<string, EvaluationVariant> = {
    [OFF_VARIANT]: { key: OFF_VARIANT, metadata: { default: true } },
  };
  for (const key of authoredKeys) {
    const { payload } = flag.variants[key]!;
    variants[key] = {
      ...variants[key],
      key,
      ...(key === OFF_VARIANT ? {} : { value: key }),
      ...(payload === undefined ? {} : { payload }),
    };
  }

  const metadata: Record<string, unknown> = {
    deployed: true,
    evaluationMode: 'remote',
    flagType: flag.type ?? 'release',
    flagVersion: flag.version ?? 1,
  };
  if (flag.experimentKey) metadata.experimentKey = flag.experimentKey;
  const compiled: EvaluationFlag = {
    key: flag.key,
    metadata,
    variants,
    segments: [
      ...ruleSegments,
      { metadata: { segmentName: 'All Other Users' }, ...split(flag.rollout ?? 100, flagWeights, path) },
    ],
  };
  if (dependencies.size > 0) compiled.dependencies = [...dependencies];
  return compiled;
}

/** Whether `flag` is served to the deployment named `deployment`. */
export const servedBy = (flag: Pick<AuthoredFlag, 'deployments'>, deployment: string): boolean => !flag.deployments || flag.deployments.includes(deployment);

/**
 * Compiles a flag file's flags; keys must be unique, and every deployment that serves a
 * flag must serve the flags it depends on.
 */
export function compileFlags(flags: readonly AuthoredFlag[]): EvaluationFlag[] {
  const byKey = new Map<string, AuthoredFlag>();
  for (const flag of flags) {
    if (byKey.has(flag.key)) throw new AuthoringError(flag.key, 'duplicate flag key');
    if (flag.deployments !== undefined && !(Array.isArray(flag.deployments) && flag.deployments.every((name) => typeof name === 'string' && name !== ''))) {
      throw new AuthoringError(`${flag.key}.deployments`, 'must be a list of deployment names');
    }
    byKey.set(flag.key, flag);
  }
  return flags.map((flag) => {
    const compiled = compileFlag(flag);
    for (const dependency of compiled.dependencies ?? []) {
      const needed = byKey.get(dependency);
      if (!needed) continue;
      if (!flag.deployments) {
        if (needed.deployments) throw new AuthoringError(`${flag.key}.deployments`, `depends on "${dependency}", which not every deployment serves`);
        continue;
      }
      const missing = flag.deployments.filter((name) => !servedBy(needed, name));
      if (missing.length > 0) throw new AuthoringError(`${flag.key}.deployments`, `depends on "${dependency}", which ${missing.join(', ')} does not serve`);
    }
    return compiled;
  });
}
