// `for await` over the flag listings of the experiment host: both answer every flag at once.
import { lenient, type ExperimentClient } from './clients.js';
import { listed, signalInit, type ListOptions, type Listing } from './paging.js';
import type { EvaluationFlag, ExperimentClientPaths, FlagConfiguration } from './types.js';

export type ListFlagsParams = NonNullable<ExperimentClientPaths['/v1/flags']['get']['parameters']['query']>;

/** The configurations of the deployment's flags and experiments (those named in `flag_keys`, else all). */
export function listFlags(client: ExperimentClient, params: ListFlagsParams = {}, options: ListOptions = {}): Listing<FlagConfiguration> {
  const get = () => lenient(client).GET('/v1/flags', { params: { query: params }, ...signalInit(options) });
  return listed('listing flag configurations', get, (flags) => flags);
}

/** Every flag of the deployment in the evaluation format the official SDKs download. */
export function listSdkFlags(client: ExperimentClient, options: ListOptions = {}): Listing<EvaluationFlag> {
  return listed('listing flags for local evaluation', () => lenient(client).GET('/sdk/v2/flags', signalInit(options)), (flags) => flags);
}
