// The official SDKs' evaluation engine (experiment-core `EvaluationEngine`, `select` and
// `topologicalSort`), over the evaluation format of specs/experiment/schemas/EvaluationFlag.yaml:
// - flags are evaluated after the flags they depend on; each result is selectable by later
//   flags as `[result, <flag key>, …]`, the context as `[context, …]`;
// - segments are tried in order and the first whose conditions match decides (no conditions
//   match everyone); a flag no segment decides has no result;
// - bucketing: hash = murmur3_x86_32(`${salt}/${bucketing value}`), allocation value
//   `hash % 100` against each allocation's [start, end), distribution value
//   `Math.floor(hash / 100)` against each distribution's [start, end); no bucketing value or no
//   hit gives the segment's `variant`;
// - the result is the flag's variant with metadata merged: flag, then segment, then variant.
import { coerceString, matchCondition } from './conditions.js';
import type { EvaluationContext, EvaluationFlag, EvaluationSegment, EvaluationVariant } from './format.js';
import { murmur3X86_32 } from './murmur3.js';

type Target = { context: EvaluationContext; result: Record<string, EvaluationVariant> };

export class FlagDependencyCycleError extends Error {
  constructor(readonly path: readonly string[]) {
    super(`Flags depend on each other in a cycle: ${path.join(' → ')}`);
    this.name = 'FlagDependencyCycleError';
  }
}

/** The value at `selector`, walking objects from `target`; undefined when the path leaves them. */
export function select(target: unknown, selector: readonly string[]): unknown {
  if (selector.length === 0) return undefined;
  let current = target;
  for (const key of selector) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/** The bucket values of a bucketing key: which allocation (0–99) and distribution (0–42949672) slot it falls in. */
export function bucketValues(salt: string, bucketingValue: string): { allocation: number; distribution: number } {
  const hash = murmur3X86_32(`${salt}/${bucketingValue}`);
  return { allocation: hash % 100, distribution: Math.floor(hash / 100) };
}

const inRange = (value: number, range: readonly number[]): boolean => value >= range[0]! && value < range[1]!;

function bucket(target: Target, segment: EvaluationSegment): string | undefined {
  if (!segment.bucket) return segment.variant;
  const bucketingValue = coerceString(select(target, segment.bucket.selector));
  if (bucketingValue === undefined) return segment.variant;
  const values = bucketValues(segment.bucket.salt, bucketingValue);
  for (const allocation of segment.bucket.allocations) {
    if (!inRange(values.allocation, allocation.range)) continue;
    for (const distribution of allocation.distributions) {
      if (inRange(values.distribution, distribution.range)) return distribution.variant;
    }
  }
  return segment.variant;
}

function segmentMatches(target: Target, segment: EvaluationSegment): boolean {
  if (!segment.conditions) return true;
  return segment.conditions.some((all) =>
    all.every((condition) => matchCondition(select(target, condition.selector), condition)),
  );
}

function evaluateFlag(target: Target, flag: EvaluationFlag): EvaluationVariant | undefined {
  for (const segment of flag.segments) {
    if (!segmentMatches(target, segment)) continue;
    const variantKey = bucket(target, segment);
    const variant = variantKey === undefined ? undefined : flag.variants[variantKey];
    // A matching segment without a variant to give falls through to the next one, as upstream.
    if (!variant) continue;
    return { ...variant, metadata: { ...flag.metadata, ...segment.metadata, ...variant.metadata } };
  }
  return undefined;
}

/**
 * The flags named by `flagKeys` (all when omitted) and the flags they depend on, each after its
 * dependencies; unknown keys are skipped. Throws FlagDependencyCycleError on a cycle.
 */
export function sortByDependencies(flags: readonly EvaluationFlag[], flagKeys?: readonly string[]): EvaluationFlag[] {
  const available = new Map(flags.map((flag) => [flag.key, flag]));
  const sorted: EvaluationFlag[] = [];
  const visit = (key: string, path: string[]) => {
    if (path.includes(key)) throw new FlagDependencyCycleError([...path, key]);
    const flag = available.get(key);
    if (!flag) return;
    for (const parent of flag.dependencies ?? []) visit(parent, [...path, key]);
    available.delete(key);
    sorted.push(flag);
  };
  for (const key of flagKeys ?? flags.map((flag) => flag.key)) visit(key, []);
  return sorted;
}

/**
 * Evaluates `flags` for `context`: flag key → result, for the flags named by `flagKeys` (all
 * when omitted) that a segment decides. Dependencies are evaluated too but only reported when
 * asked for.
 */
export function evaluateFlags(
  context: EvaluationContext,
  flags: readonly EvaluationFlag[],
  flagKeys?: readonly string[],
): Record<string, EvaluationVariant> {
  const target: Target = { context, result: {} };
  for (const flag of sortByDependencies(flags, flagKeys)) {
    const variant = evaluateFlag(target, flag);
    if (variant) target.result[flag.key] = variant;
  }
  if (!flagKeys) return target.result;
  const wanted = new Set(flagKeys);
  return Object.fromEntries(Object.entries(target.result).filter(([key]) => wanted.has(key)));
}
