// The shapes of the listings (`x-svc-pagination` of the specs): answered at once (`none`), page
// by page following `next_page_token` (`token`), or `limit` items at a time from an `offset`
// (`offset`). A listing yields its items; `withResponse()` walks the same answers with their
// responses.
import { responseError } from './errors.js';
import { withResponseOf, type Answer, type WithResponse } from './raw.js';

/** Options every iterator takes. */
export interface ListOptions {
  signal?: AbortSignal;
}

export const signalInit = (options: ListOptions): { signal?: AbortSignal } => (options.signal ? { signal: options.signal } : {});

/** A listing's answers, each one's items as `data`. */
export type Answers<T> = AsyncGenerator<WithResponse<T[]>, void, undefined>;

/** `for await` over a listing's items; nothing is asked for before the first iteration. */
export interface Listing<T> extends AsyncGenerator<T, void, undefined> {
  /**
   * The same listing answer by answer, asked for anew: each answer's items as `data`, with its
   * `response` and `requestId`.
   */
  withResponse(): Answers<T>;
}

/** The listing whose answers `answers()` walks, from the first one at each call. */
export function listing<T>(answers: () => Answers<T>): Listing<T> {
  async function* items(): AsyncGenerator<T, void, undefined> {
    for await (const answer of answers()) yield* answer.data;
  }
  return Object.assign(items(), { withResponse: answers });
}

/** A 2xx answer with its data; any other answer, or one without a body, throws the `SvcError` of its status. */
function pageOf<D>(answer: Answer<D>, action: string): WithResponse<D> {
  const { data, error, response } = answer;
  if (data === undefined || !response.ok) throw responseError(action, response.status, error, response.headers);
  return withResponseOf(data, response);
}

/** The one answer of a listing answered at once, `pick` giving its items. */
export async function* oneAnswer<D, T>(action: string, get: () => Promise<Answer<D>>, pick: (data: D) => T[]): Answers<T> {
  const page = pageOf(await get(), action);
  yield { ...page, data: pick(page.data) };
}

/** A listing answered at once (`style: none`). */
export function listed<D, T>(action: string, get: () => Promise<Answer<D>>, pick: (data: D) => T[]): Listing<T> {
  return listing(() => oneAnswer(action, get, pick));
}

/**
 * Every page of a token-paged listing, the next asked for only once the caller is done with
 * the previous one: `next_page_token` goes back unchanged as the next `page_token`, until it is
 * `null`. A token that repeats would loop forever, so it throws.
 */
export async function* tokenPages<D extends { next_page_token: string | null }>(
  action: string,
  get: (pageToken: string | undefined) => Promise<Answer<D>>,
): AsyncGenerator<WithResponse<D>, void, undefined> {
  let pageToken: string | undefined;
  do {
    const page = pageOf(await get(pageToken), action);
    yield page;
    const next = page.data.next_page_token;
    if (next !== null && next === pageToken) throw new Error(`${action}: the service returned the same next_page_token twice (${next})`);
    pageToken = next ?? undefined;
  } while (pageToken !== undefined);
}

/** A token-paged listing (`style: token`), `pick` giving each page's items. */
export function tokenListing<D extends { next_page_token: string | null }, T>(
  action: string,
  get: (pageToken: string | undefined) => Promise<Answer<D>>,
  pick: (data: D) => T[],
): Listing<T> {
  return listing(async function* () {
    for await (const page of tokenPages(action, get)) yield { ...page, data: pick(page.data) };
  });
}

/**
 * A listing read `limit` items at a time (`style: offset`): the next page starts after the items
 * read so far, and a page shorter than `limit` is the last.
 */
export function offsetListing<D, T>(action: string, limit: number, get: (offset: number) => Promise<Answer<D>>, pick: (data: D) => T[]): Listing<T> {
  return listing(async function* () {
    for (let offset = 0; ; ) {
      const page = pageOf(await get(offset), action);
      const items = pick(page.data);
      yield { ...page, data: items };
      if (items.length < limit) return;
      offset += items.length;
    }
  });
}
