// The typed server stubs: one handler per operationId of the bundles, typed from the
// openapi-typescript `operations` (src/generated/operations.ts). A missing handler, a
// status the spec does not document for the operation, or a body of the wrong shape is a
// compile error (see test/http/operations.test-d.ts).
import type { Operations } from '../generated/operations.js';
import type { Deployment, Project } from '../shared/tenancy.js';

export type OperationId = keyof Operations;

type ContentOf<T> = T extends { content: infer C } ? C[keyof C] : T extends { content?: infer C } ? C[keyof C] | undefined : undefined;

/** The parsed request body of an operation (JSON value or form fields). */
export type RequestBody<K extends OperationId> = Operations[K] extends { requestBody: infer B }
  ? ContentOf<B>
  : Operations[K] extends { requestBody?: infer B }
    ? ContentOf<NonNullable<B>> | undefined
    : undefined;

type ParametersOf<K extends OperationId> = Operations[K]['parameters'];
/** Query parameters, deserialized (JSON `content` parameters parsed). */
export type QueryParameters<K extends OperationId> = NonNullable<ParametersOf<K>['query']>;
export type HeaderParameters<K extends OperationId> = NonNullable<ParametersOf<K>['header']>;
export type PathParameters<K extends OperationId> = NonNullable<ParametersOf<K>['path']>;

type Responses<K extends OperationId> = Operations[K]['responses'];

/** One documented answer of an operation: a status and the body the spec gives it. */
export type Reply<K extends OperationId> = {
  [S in keyof Responses<K> & number]: { status: S; body: ContentOf<Responses<K>[S]>; headers?: Record<string, string> };
}[keyof Responses<K> & number];

/** Who is calling, as established from the operation's credentials before the handler runs. */
export interface Caller {
  /** The project of the API key (ingestion, feedback, attribution). */
  project?: Project;
  /** The experiment deployment of the deployment key. */
  deployment?: Deployment;
}

export interface HandlerRequest<K extends OperationId> {
  operationId: K;
  body: RequestBody<K>;
  query: Partial<QueryParameters<K>>;
  headers: Partial<HeaderParameters<K>>;
  path: PathParameters<K>;
  caller: Caller;
  /** Milliseconds since the epoch when the request arrived. */
  receivedAt: number;
  /** Size of the (inflated) request body in bytes. */
  payloadBytes: number;
  /** The (inflated) request body as received, when there was one: for checks over the exact text sent. */
  bodyText?: string;
  remoteAddress: string;
  /** Scheme and host the client addressed (`http://127.0.0.1:8000`), for links back to this server. */
  origin: string;
}

export type Handler<K extends OperationId> = (request: HandlerRequest<K>) => Promise<Reply<K>> | Reply<K>;

/** Every operation's handler, keyed by operationId. */
export type Handlers = { [K in OperationId]: Handler<K> };
