// Calls to objects that live in a child process: request/response by id over its IPC channel.
// Async methods answer once; async iterables are pulled a chunk per request (the consumer asks
// for the next one, so a result is never buffered whole and a consumer that stops stops the
// producer); a SqlSession transaction holds the other process's session while its callback runs
// here. Errors cross with their name, message, stack and primitive fields (a refusal's `code`).
import { fork, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { SqlSession } from '../types.js';

type Method = (...args: never[]) => unknown;
type MethodNames<T> = { [K in keyof T]-?: T[K] extends Method ? K : never }[keyof T] & string;
/** How a method crosses: answered once, or pulled a chunk at a time; never for a sync method. */
type KindOf<F> = F extends (...args: never[]) => AsyncIterable<unknown> ? 'stream' : F extends (...args: never[]) => Promise<unknown> ? 'call' : never;

/** Every method of `T` with how it crosses: a method missing here, or a sync one, does not compile. */
export type MethodKinds<T> = { [K in MethodNames<T>]: KindOf<T[K]> };
/** The methods of `T`, answered by the other process. */
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

/** The child's last message before an error nothing caught ends it. */
interface Fatal {
  fatal: SerializedError;
}

/** A message of the child's for the operator's log (background work that failed). */
interface LogLine {
  log: string;
}

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

/** The channel the two processes talk over (the child process on this side, `process` in the child). */
export interface Port {
  postMessage(message: unknown): void;
  on(event: 'message', listener: (message: any) => void): unknown;
  /** Told when answers start and stop being awaited: the channel keeps this process alive only meanwhile. */
  awaiting?(awaiting: boolean): void;
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
      if (this.pending.size === 0) port.awaiting?.(false);
      if (response.ok) waiting.resolve(response.value);
      else waiting.reject(deserializeError(response.error));
    });
  }

  /** Fails every pending and later request with `error` (the other process is gone). */
  fail(error: Error): void {
    this.failure ??= error;
    for (const waiting of this.pending.values()) waiting.reject(this.failure);
    this.pending.clear();
    this.port.awaiting?.(false);
  }

  /** Sends a request: its id (which names the stream or transaction it opens) and its answer. */
  private send(request: RequestBody): { id: number; answer: Promise<unknown> } {
    const id = this.nextId++;
    if (this.failure) return { id, answer: Promise.reject(this.failure) };
    const answer = new Promise((resolve, reject) => {
      if (this.pending.size === 0) this.port.awaiting?.(true);
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

/** What proxies send their calls through: one process's client, or one that follows a restarted process. */
export type Caller = Pick<RpcClient, 'call' | 'stream' | 'transaction'>;

/** A proxy whose methods are answered by `target` in the other process. */
export function remote<T>(client: Caller, target: string, kinds: MethodKinds<T>): Remote<T> {
  const proxy: Record<string, (...args: unknown[]) => unknown> = {};
  for (const [method, kind] of Object.entries(kinds)) {
    proxy[method] = kind === 'stream' ? (...args) => client.stream(target, method, args) : (...args) => client.call(target, method, args);
  }
  return proxy as Remote<T>;
}

/** A SqlSession answered by the session `target` in the other process. */
export function remoteSession(client: Caller, target: string): SqlSession {
  return {
    ...remote<Omit<SqlSession, 'transaction'>>(client, target, { rows: 'call', run: 'call' }),
    transaction: (work) => client.transaction(target, work),
  };
}

/**
 * How much lower than its parent's a child's priority is: a niceness added (0-19), or `idle`,
 * Linux's SCHED_IDLE (its threads run on CPU time no other thread wants, and give it up at once).
 */
export type Lowering = number | 'idle';

/** What a child process is started with: its module, which calls `serveProcess`, and that module's data. */
export interface Launch {
  entry: URL;
  data: unknown;
  nice: Lowering;
  /** Node flags after the inherited ones (a later V8 flag wins over an earlier one). */
  nodeFlags?: string[];
}

/** A child process whose module `serve`s, once it is ready. */
export interface ServingProcess {
  client: RpcClient;
  /** Ends the process; later calls fail. */
  terminate(): Promise<void>;
  /** Settles when the process fails or exits other than by `terminate`. */
  died: Promise<void>;
  /** Ends the process as a death would (for tests: what the OOM killer or DuckDB's abort does). */
  kill(): Promise<void>;
}

/** The code of the error a call gets when the process ended under it (the storage is away: 503). */
export const PROCESS_ENDED = 'SVC_PROCESS_ENDED';
const processEnded = (message: string) => Object.assign(new Error(message), { code: PROCESS_ENDED });

/** Flags of what Node runs instead of the entry it is given (the parent's `node -e SCRIPT`), and those of them written with a value. */
const RUN_FLAGS = new Set(['-e', '--eval', '-p', '--print', '--input-type', '-i', '--interactive', '-c', '--check', '--test']);
const RUN_FLAGS_WITH_VALUE = new Set(['-e', '--eval', '-p', '--print', '--input-type']);

/**
 * The parent's Node flags a child takes: all but those that run something else, or a server
 * started from `node -e` would have its engine process run the script again (each one starting
 * another server and engine process, without end).
 */
export function inheritedNodeFlags(execArgv: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const flag = execArgv[i]!;
    const name = flag.split('=')[0]!;
    if (!RUN_FLAGS.has(name)) kept.push(flag);
    else if (RUN_FLAGS_WITH_VALUE.has(flag)) i++;
  }
  return kept;
}

/**
 * Starts the child process of `launch` and waits until its targets are open. A process that
 * dies (killed, aborted, an uncaught error) fails every pending and later call, and is logged,
 * as are the lines the child logs.
 * The child inherits this process's Node flags (the server's heap settings; in tests, the
 * TypeScript loader; not those that run a script: `inheritedNodeFlags`), then takes the
 * launch's own, and ends when this process does.
 */
export async function startProcess(launch: Launch, log: (message: string) => void): Promise<ServingProcess> {
  // Advanced serialization: Maps, BigInts and typed arrays cross as with structured clone.
  // Not detached: in this process's session, where Linux's autogroup ranks its threads with
  // this process's by niceness (a session of its own would share the CPUs with this one).
  const child = fork(fileURLToPath(launch.entry), { serialization: 'advanced', execArgv: [...inheritedNodeFlags(process.execArgv), ...(launch.nodeFlags ?? [])] });
  const port: Port = {
    // A send that fails finds the channel closed: the exit that follows fails the call.
    postMessage: (message) => child.send(message as object, () => undefined),
    on: (event, listener) => child.on(event, listener),
    awaiting: (awaiting) => (awaiting ? child.channel?.ref() : child.channel?.unref()),
  };
  const client = new RpcClient(port);
  let ending = false;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // The error that ended the child, when it could say (its stderr may go nowhere).
  let fatal: Error | undefined;
  child.on('message', (message: Partial<Fatal & LogLine>) => {
    if (message.fatal) fatal = deserializeError(message.fatal);
    if (message.log !== undefined) log(message.log);
  });
  const how = (code: number | null, signal: NodeJS.Signals | null) => (signal ? `was killed (${signal})` : `exited (code ${code})${fatal ? `: ${fatal.stack ?? fatal.message}` : ''}`);
  const started = new Promise<void>((ready, failed) => {
    const hear = (message: Startup | LogLine | Fatal) => {
      if (!('ready' in message)) return;
      child.off('message', hear);
      if (message.ready) ready();
      else failed(deserializeError(message.error));
    };
    // Log lines may come first, from the opening.
    child.on('message', hear);
    child.once('exit', (code, signal) => failed(new Error(`The process ${how(code, signal)} while starting`)));
  });
  let died!: () => void;
  const death = new Promise<void>((resolve) => (died = resolve));
  // `died` before `fail`: whoever watches the death hears of it before the failed calls do.
  child.on('error', (error) => {
    log(`the process failed: ${error.stack ?? error.message}`);
    died();
    client.fail(processEnded(`The process failed: ${error.message}`));
  });
  // On 'close', after the channel's last messages (the fatal error) were read.
  child.on('close', (code, signal) => {
    if (!ending) {
      log(`the process ${how(code, signal)}`);
      died();
    }
    client.fail(processEnded(`The process ${how(code, signal)}`));
  });
  /** Waits for the exit, holding this process alive until then. */
  const exit = async (signal?: NodeJS.Signals) => {
    child.ref();
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  const terminate = async () => {
    ending = true;
    await exit();
  };
  child.send({ data: launch.data, nice: launch.nice }, () => undefined);
  try {
    await started;
  } catch (error) {
    await terminate();
    throw error;
  }
  // Idle, the child does not keep this process alive; calls awaited do (`awaiting`).
  child.unref();
  child.channel?.unref();
  return { client, terminate, died: death, kill: () => exit('SIGKILL') };
}

/**
 * The child's side: takes its data from the parent's first message, lowers its threads'
 * priority, then serves the targets `open` makes of the data until the parent is gone. The
 * lines `open`'s targets log go to the parent's log.
 */
export function serveProcess(open: (data: unknown, log: (message: string) => void) => Promise<Map<string, object>>): void {
  const port: Port = { postMessage: (message) => process.send!(message), on: (event, listener) => process.on(event, listener) };
  // The parent ended or was killed: there is no one left to answer.
  process.once('disconnect', () => process.exit(0));
  // A terminal's Ctrl-C reaches the whole process group: the parent ends this process after
  // closing what it serves, not in the middle of its close.
  process.on('SIGINT', () => undefined);
  // An error nothing caught ends the process as Node would, once the parent has it to log.
  process.on('uncaughtException', (error) => {
    process.send!({ fatal: serializeError(error) } satisfies Fatal, () => process.exit(1));
    setTimeout(() => process.exit(1), 1_000);
  });
  process.once('message', ({ data, nice }: Omit<Launch, 'entry'>) => {
    lowerPriority(nice);
    // A line the parent can no longer take (the channel closed) is dropped: this process is ending.
    void serve(port, () => open(data, (message) => process.send!({ log: message } satisfies LogLine, () => undefined)));
  });
}

/**
 * Linux keeps a niceness and a scheduling policy per thread (`setPriority(pid)` sets the main
 * thread's only) and a new thread takes its creator's: every thread now, so that those started
 * later (DuckDB's, libuv's) run at it too. SCHED_IDLE is set with util-linux's `chrt` (Node has
 * no call for it); without it, the lowest niceness is as close as it gets.
 */
function lowerPriority(nice: Lowering): void {
  if (nice === 'idle' && process.platform === 'linux' && spawnSync('chrt', ['--idle', '--all-tasks', '--pid', '0', String(process.pid)]).status === 0) return;
  const threads = process.platform === 'linux' ? readdirSync('/proc/self/task').map(Number) : [process.pid];
  for (const thread of threads) setPriority(thread, nice === 'idle' ? 19 : Math.min(19, getPriority(thread) + nice));
}

type Callable = Record<string, (...args: unknown[]) => unknown>;

/** The answering side: opens the targets, then serves requests on them until the process ends. */
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
    if (!target) throw new Error(`No target ${name} in the process`);
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
    if (!transaction) throw new Error(`No transaction ${tx} in the process`);
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
