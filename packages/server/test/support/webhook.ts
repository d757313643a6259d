// A webhook receiver on 127.0.0.1 for the event streaming tests: it answers each request as
// `answer` decides and keeps every request it got, with the events of the body.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  batchId: string;
  attempt: number;
  events: Record<string, unknown>[];
  status: number;
  /** The body as it arrived, and the request's headers (for signature checks). */
  body: string;
  headers: IncomingHttpHeaders;
}

export interface Webhook {
  url: string;
  received: Received[];
  /** The events of the requests answered with a 2xx status. */
  delivered(): Record<string, unknown>[];
  close(): Promise<void>;
}

export async function startWebhook(answer: (events: Record<string, unknown>[], headers: IncomingHttpHeaders) => number): Promise<Webhook> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (text += chunk));
    request.on('end', () => {
      const { events } = JSON.parse(text) as { events: Record<string, unknown>[] };
      const status = answer(events, request.headers);
      received.push({ batchId: String(request.headers['x-svc-batch-id']), attempt: Number(request.headers['x-svc-attempt']), events, status, body: text, headers: request.headers });
      response.writeHead(status, { connection: 'close' }).end();
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    delivered: () => received.filter((r) => r.status < 300).flatMap((r) => r.events),
    close: () => new Promise((done) => server.close(() => done())),
  };
}
