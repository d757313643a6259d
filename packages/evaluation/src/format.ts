// The evaluation format and the response bodies, typed from the experiment spec
// (specs/experiment/schemas), never by hand.
import type { components } from './generated/experiment.js';

type Schemas = components['schemas'];

export type EvaluationFlag = Schemas['EvaluationFlag'];
export type EvaluationSegment = Schemas['EvaluationSegment'];
export type EvaluationCondition = Schemas['EvaluationCondition'];
export type EvaluationOperator = EvaluationCondition['op'];
export type EvaluationBucket = Schemas['EvaluationBucket'];
export type EvaluationAllocation = Schemas['EvaluationAllocation'];
export type EvaluationDistribution = Schemas['EvaluationDistribution'];
export type EvaluationVariant = Schemas['EvaluationVariant'];
/** Body of `GET /sdk/v2/vardata`. */
export type EvaluationVariants = Schemas['EvaluationVariants'];
/** Body of `GET /v1/vardata`. */
export type Variants = Schemas['Variants'];
export type Variant = Schemas['Variant'];
/** An element of the body of `GET /v1/flags`. */
export type FlagConfiguration = Schemas['FlagConfiguration'];
/** The user of `GET /v1/vardata`'s `context` and of the `X-Amp-Exp-User` header. */
export type UserContext = Schemas['UserContext'];

/**
 * What conditions and buckets select from (under `context`): the user, and the user's groups
 * as `{ <group type>: { group_name, group_properties? } }`, as the official SDKs build it.
 */
export type EvaluationContext = {
  user: UserContext;
  groups?: Record<string, { group_name: string; group_properties?: Record<string, unknown> }>;
};
