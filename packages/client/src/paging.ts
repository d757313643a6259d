// The shapes of the async iterators: a listing answered in one page, and one that hands a
// `next_page_token` to pass back as `page_token`.
import { responseError } from './errors.js';

/** What openapi-fetch resolves with, seen from a helper. */
export interface Answer<D> {
  data?: D;
  error?: unknown;
  response: Response;
}

/** Options every iterator takes. */
export interface ListOptions {
  signal?: AbortSignal;
}

export const signalInit = (options: ListOptions): { signal?: AbortSignal } => (options.signal ? { signal: options.signal } : {});

/** The data of a 2xx answer; an answer other than 2xx throws the `SvcError` of its status. */
export function dataOf<D>(answer: Answer<D>, action: string): D {
  const { data, error, response } = answer;
  if (data === undefined || !response.ok) throw responseError(action, response.status, error, response.headers);
  return data;
}

/** The items of a listing answered in one page. */
export async function* listed<D, T>(action: string, get: () => Promise<Answer<D>>, pick: (data: D) => readonly T[]): AsyncGenerator<T, void, undefined> {
  yield* pick(dataOf(await get(), action));
}

/**
 * Every page of a token-paged listing, the next asked for only once the caller is done with
 * the previous one: `next_page_token` goes back unchanged as the next `page_token`, until it is
 * `null`. A token that repeats would loop forever, so it throws.
 */
export async function* tokenPages<D extends { next_page_token: string | null }>(
  action: string,
  get: (pageToken: string | undefined) => Promise<Answer<D>>,
): AsyncGenerator<D, void, undefined> {
  let pageToken: string | undefined;
  do {
    const page = dataOf(await get(pageToken), action);
    yield page;
    const next = page.next_page_token;
    if (next !== null && next === pageToken) throw new Error(`${action}: the service returned the same next_page_token twice (${next})`);
    pageToken = next ?? undefined;
  } while (pageToken !== undefined);
}
