// Calls to objects that live in another thread: request/response by id over a message port.
// Async methods answer once; async iterables are pulled a chunk per request (the consumer asks
// for the next one, so a result is never buffered whole and a consumer that stops stops the
// producer); a SqlSession transaction holds the other thread's session while its callback runs
// here. Errors cross with their name, message, stack and primitive fields (a refusal's `code`).
import { Worker } from 'node:worker_threads';
import type { SqlSession } from '../types.js';

type Method = (...args: never[]) => unknown;
type MethodNames<T> = { [K in keyof T]-?: T[K] extends Method ? K : never }[keyof T] & string;
/** How a method crosses: answered once, or pulled a chunk at a time; never for a sync method. */
type KindOf<F> = F extends (...args: never[]) => AsyncIterable<unknown> ? 'stream' : F extends (...args: never[]) => Promise<unknown> ? 'call' : never;

/** Every method of `T` with how it crosses: a method missing here, or a sync one, does not compile. */
export type MethodKinds<T> = { [K in MethodNames<T>]: KindOf<T[K]> };
/** The methods of `T`, answered by the other thread. */
export type Remote<T> = { [K in MethodNames<T>]: T[K] };

export interface SerializedError {
  name: string;
  message: string;
  stack?: string;
  fields: [string, string | number | boolean | null][];
}

export type Request =
  | { id: number; op: 'call'; target: string; method: string; args: unknown[] }
  /** Creates the iterator and pulls its first chunk; the stream is named by this id. */
  | { id: number; op: 'open'; target: string; method: string; args: unknown[] }
  | { id: number; op: 'next'; stream: number }
  | { id: number; op: 'return'; stream: number }
  /** Starts a transaction of the SqlSession `target`; its session becomes target `tx-<id>`. */
  | { id: number; op: 'begin'; target: string }
  | { id: number; op: 'end'; tx: number; commit: boolean };

type WithoutId<R> = R extends Request ? Omit<R, 'id'> : never;
type RequestBody = WithoutId<Request>;

export type Response = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: SerializedError };
export type Startup = { ready: true } | { ready: false; error: SerializedError };

export function serializeError(thrown: unknown): SerializedError {
  if (!(thrown instanceof Error)) return { name: 'Error', message: String(thrown), fields: [] };
  const fields = Object.entries(thrown).filter((entry): entry is [string, string | number | boolean | null] => entry[1] === null || ['string', 'number', 'boolean'].includes(typeof entry[1]));
  return { name: thrown.name, message: thrown.message, stack: thrown.stack, fields };
}

export function deserializeError(serialized: SerializedError): Error {
  const error = new Error(serialized.message);
  error.name = serialized.name;
  if (serialized.stack !== undefined) error.stack = serialized.stack;
  for (const [key, value] of serialized.fields) Object.defineProperty(error, key, { value, enumerable: true, writable: true, configurable: true });
  return error;
}

/** The port the two threads talk over (a Worker on this side, `parentPort` in the worker). */
export interface Port {
  postMessage(message: unknown): void;
  on(event: 'message', listener: (message: any) => void): unknown;
}

/** The calling side. */
export class RpcClient {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private failure: Error | undefined;

  constructor(private readonly port: Port) {
    port.on('message', (response: Response) => {
      const waiting = this.pending.get(response.id);
      if (!waiting) return;
      this.pending.delete(response.id);
      if (response.ok) waiting.resolve(response.value);
      else waiting.reject(deserializeError(response.error));
    });
  }

  /** Fails every pending and later request with `error` (the other thread is gone). */
  fail(error: Error): void {
    this.failure ??= error;
    for (const waiting of this.pending.values()) waiting.reject(this.failure);
    this.pending.clear();
  }

  /** Sends a request: its id (which names the stream or transaction it opens) and its answer. */
  private send(request: RequestBody): { id: number; answer: Promise<unknown> } {
    const id = this.nextId++;
    if (this.failure) return { id, answer: Promise.reject(this.failure) };
    const answer = new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.port.postMessage({ ...request, id });
    });
    return { id, answer };
  }

  private request(request: RequestBody): Promise<unknown> {
    return this.send(request).answer;
  }

  call(target: string, method: string, args: unknown[]): Promise<unknown> {
    return this.request({ op: 'call', target, method, args });
  }

  /** The chunks of a remote async iterable, each requested when the consumer asks for it. */
  stream(target: string, method: string, args: unknown[]): AsyncIterable<unknown> {
    return {
      [Symbol.asyncIterator]: () => {
        let stream: number | undefined;
        let finished = false;
        const settle = (result: IteratorResult<unknown>) => {
          finished = result.done === true;
          return result;
        };
        return {
          next: async () => {
            if (finished) return { done: true, value: undefined };
            if (stream !== undefined) return settle((await this.request({ op: 'next', stream })) as IteratorResult<unknown>);
            const opened = this.send({ op: 'open', target, method, args });
            stream = opened.id;
            return settle((await opened.answer) as IteratorResult<unknown>);
          },
          return: async () => {
            if (stream !== undefined && !finished) {
              finished = true;
              await this.request({ op: 'return', stream });
            }
            return { done: true, value: undefined };
          },
        };
      },
    };
  }

  /** `target`'s transaction: `work` runs here, its statements there, on the session the transaction holds. */
  async transaction<T>(target: string, work: (session: Omit<SqlSession, 'transaction'>) => Promise<T>): Promise<T> {
    const { id: tx, answer: begun } = this.send({ op: 'begin', target });
    await begun;
    const session = remote<Omit<SqlSession, 'transaction'>>(this, `tx-${tx}`, { rows: 'call', run: 'call' });
    let result: T;
    try {
      result = await work(session);
    } catch (error) {
      await this.request({ op: 'end', tx, commit: false });
      throw error;
    }
    await this.request({ op: 'end', tx, commit: true });
    return result;
  }
}

/** What proxies send their calls through: one thread's client, or one that follows a restarted thread. */
export type Caller = Pick<RpcClient, 'call' | 'stream' | 'transaction'>;

/** A proxy whose methods are answered by `target` in the other thread. */
export function remote<T>(client: Caller, target: string, kinds: MethodKinds<T>): Remote<T> {
  const proxy: Record<string, (...args: unknown[]) => unknown> = {};
  for (const [method, kind] of Object.entries(kinds)) {
    proxy[method] = kind === 'stream' ? (...args) => client.stream(target, method, args) : (...args) => client.call(target, method, args);
  }
  return proxy as Remote<T>;
}

/** A SqlSession answered by the session `target` in the other thread. */
export function remoteSession(client: Caller, target: string): SqlSession {
  return {
    ...remote<Omit<SqlSession, 'transaction'>>(client, target, { rows: 'call', run: 'call' }),
    transaction: (work) => client.transaction(target, work),
  };
}

/** A worker whose module `serve`s, once it is ready. */
export interface ServingWorker {
  client: RpcClient;
  /** Ends the thread; later calls fail. */
  terminate(): Promise<void>;
  /** Settles when the thread fails or exits other than by `terminate` (it may still be exiting). */
  died: Promise<void>;
  /** Ends the thread as a death would (for tests: what an uncaught error or running out of heap does). */
  kill(): Promise<void>;
}

/**
 * Starts the worker of module `entry` and waits until its targets are open. A thread that
 * dies (an uncaught error, its heap out of memory) or exits fails every pending and later
 * call, and is logged.
 */
export async function startWorker(entry: URL, workerData: unknown, log: (message: string) => void): Promise<ServingWorker> {
  const worker = new Worker(entry, { workerData });
  const client = new RpcClient(worker);
  let ending = false;
  const started = new Promise<void>((ready, failed) => {
    worker.once('message', (startup: Startup) => (startup.ready ? ready() : failed(deserializeError(startup.error))));
    worker.once('exit', (code) => failed(new Error(`The worker thread exited with code ${code} while starting`)));
  });
  let died!: () => void;
  const death = new Promise<void>((resolve) => (died = resolve));
  // `died` before `fail`: whoever watches the death hears of it before the failed calls do.
  worker.on('error', (error) => {
    log(`the worker thread failed: ${error.stack ?? error.message}`);
    died();
    client.fail(new Error(`The worker thread failed: ${error.message}`));
  });
  worker.on('exit', (code) => {
    if (!ending) {
      log(`the worker thread exited (code ${code})`);
      died();
    }
    client.fail(new Error(`The worker thread exited (code ${code})`));
  });
  const terminate = async () => {
    ending = true;
    await worker.terminate();
  };
  try {
    await started;
  } catch (error) {
    await terminate();
    throw error;
  }
  return { client, terminate, died: death, kill: async () => void (await worker.terminate()) };
}

type Callable = Record<string, (...args: unknown[]) => unknown>;

/** The answering side: opens the targets, then serves requests on them until the thread ends. */
export async function serve(port: Port, open: () => Promise<Map<string, object>>): Promise<void> {
  let targets: Map<string, object>;
  try {
    targets = await open();
  } catch (error) {
    port.postMessage({ ready: false, error: serializeError(error) } satisfies Startup);
    return;
  }
  const streams = new Map<number, AsyncIterator<unknown>>();
  const transactions = new Map<number, { end: (commit: boolean) => void; outcome: Promise<unknown> }>();
  const targetOf = (name: string) => {
    const target = targets.get(name);
    if (!target) throw new Error(`No target ${name} in the worker`);
    return target as Callable;
  };
  const pull = async (stream: number, iterator: AsyncIterator<unknown>) => {
    const result = await iterator.next().catch((error: unknown) => {
      streams.delete(stream);
      throw error;
    });
    if (result.done) streams.delete(stream);
    return result;
  };
  const begin = (id: number, target: string) =>
    new Promise((begun, failed) => {
      let end!: (commit: boolean) => void;
      const committed = new Promise<void>((commit, rollback) => (end = (ok) => (ok ? commit() : rollback(new Error('rolled back')))));
      const session = targetOf(target) as unknown as SqlSession;
      const outcome = session.transaction(async (inner) => {
        targets.set(`tx-${id}`, inner);
        begun(undefined);
        await committed;
      });
      transactions.set(id, { end, outcome });
      outcome
        .catch((error: unknown) => {
          transactions.delete(id);
          failed(error);
        })
        .finally(() => targets.delete(`tx-${id}`));
    });
  const end = async (tx: number, commit: boolean) => {
    const transaction = transactions.get(tx);
    if (!transaction) throw new Error(`No transaction ${tx} in the worker`);
    transactions.delete(tx);
    transaction.end(commit);
    if (commit) await transaction.outcome;
    else await transaction.outcome.catch(() => undefined);
  };
  const answer = async (request: Request): Promise<unknown> => {
    switch (request.op) {
      case 'call':
        return targetOf(request.target)[request.method]!(...request.args);
      case 'open': {
        const iterator = (targetOf(request.target)[request.method]!(...request.args) as AsyncIterable<unknown>)[Symbol.asyncIterator]();
        streams.set(request.id, iterator);
        return pull(request.id, iterator);
      }
      case 'next': {
        const iterator = streams.get(request.stream);
        return iterator ? pull(request.stream, iterator) : { done: true, value: undefined };
      }
      case 'return': {
        const iterator = streams.get(request.stream);
        streams.delete(request.stream);
        await iterator?.return?.();
        return undefined;
      }
      case 'begin':
        return begin(request.id, request.target);
      case 'end':
        return end(request.tx, request.commit);
    }
  };
  port.on('message', (request: Request) => {
    answer(request).then(
      (value) => port.postMessage({ id: request.id, ok: true, value } satisfies Response),
      (error: unknown) => port.postMessage({ id: request.id, ok: false, error: serializeError(error) } satisfies Response),
    );
  });
  port.postMessage({ ready: true } satisfies Startup);
}
