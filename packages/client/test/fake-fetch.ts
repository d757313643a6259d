/** A recorded request, with its body read as text. */
export interface Recorded {
  method: string;
  url: URL;
  headers: Headers;
  body: string;
}

export type Handler = (request: Recorded, index: number) => Response | Promise<Response>;

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } });
}

/** A fetch that records every request and answers with `handler` (default: 200 `{}`). */
export function fakeFetch(handler: Handler = () => json(200, {})) {
  const calls: Recorded[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const request = input instanceof Request ? input : new Request(input, init);
    const recorded: Recorded = {
      method: request.method,
      url: new URL(request.url),
      headers: request.headers,
      body: request.body ? await request.text() : '',
    };
    calls.push(recorded);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return await handler(recorded, calls.length - 1);
    } finally {
      inFlight--;
    }
  };
  return {
    fetch: fetch as typeof globalThis.fetch,
    calls,
    get maxInFlight() {
      return maxInFlight;
    },
  };
}

export const utf8Bytes = (text: string) => new TextEncoder().encode(text).length;
