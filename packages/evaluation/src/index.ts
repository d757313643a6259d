export { murmur3X86_32 } from './murmur3.js';
export { evaluateFlags, sortByDependencies, select, bucketValues, FlagDependencyCycleError } from './engine.js';
export { matchCondition } from './conditions.js';
export {
  compileFlag,
  compileFlags,
  servedBy,
  AuthoringError,
  DISTRIBUTION_SLOTS,
  OFF_VARIANT,
  type AuthoredFlag,
  type AuthoredVariant,
  type AuthoredRule,
  type AuthoredCondition,
} from './authoring.js';
export {
  contextFromUser,
  userFromVardataQuery,
  userFromSdkHeader,
  flagKeysFromSdkHeader,
  parseFlagKeysQuery,
  EvaluationRequestError,
} from './requests.js';
export { vardataBody, sdkVardataBody, sdkFlagsBody, flagsBody } from './responses.js';
export type * from './format.js';
