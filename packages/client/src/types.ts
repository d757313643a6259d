import type {
  ExperimentComponents,
  FeedbackComponents,
  HostRolePaths,
  IngestionComponents,
} from './generated/roles.js';

/**
 * The credential fields callers never pass: the clients inject `api_key`, and send HTTP Basic
 * instead of a `secret_key` query parameter (which would put the secret into URLs and logs).
 */
export type InjectedCredentialKey = 'api_key' | 'secret_key';

type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'options' | 'head' | 'patch' | 'trace';

/**
 * Drops the injected credential keys from an object type. Distributes over unions and keeps
 * index signatures and optional modifiers (a key-remapped homomorphic mapped type), so
 * `{ a: string } & { [k: string]: unknown }` stays exactly that minus `api_key`.
 */
export type OmitCredentials<T> = T extends readonly unknown[]
  ? T
  : T extends object
    ? { [K in keyof T as K extends InjectedCredentialKey ? never : K]: T[K] }
    : T;

type StripParameters<P> = {
  [K in keyof P]: K extends 'query' ? OmitCredentials<P[K]> : P[K];
};

type StripContent<C> = { [M in keyof C]: OmitCredentials<C[M]> };

type StripRequestBody<B> = {
  [K in keyof B]: K extends 'content' ? StripContent<B[K]> : B[K];
};

type StripOperation<Op> = {
  [K in keyof Op]: K extends 'parameters'
    ? StripParameters<Op[K]>
    : K extends 'requestBody'
      ? StripRequestBody<Op[K]>
      : Op[K];
};

/**
 * The generated `paths` with `api_key` removed from every request body and query string:
 * the clients put the key where each operation wants it (`x-svc-credentials`).
 */
export type WithoutCredentials<Paths> = {
  [P in keyof Paths]: {
    [M in keyof Paths[P]]: M extends HttpMethod ? StripOperation<Paths[P][M]> : Paths[P][M];
  };
};

/** Paths of the ingestion host role, as the ingest client accepts them. */
export type IngestClientPaths = WithoutCredentials<HostRolePaths['ingest']>;
/** Paths of the application host role (feedback and the other Basic-auth groups). */
export type AppClientPaths = WithoutCredentials<HostRolePaths['app']>;
/** Paths of the experiment evaluation host role. */
export type ExperimentClientPaths = WithoutCredentials<HostRolePaths['experiment']>;
/** Paths of the API host role (user mapping writes, attribution). */
export type ApiClientPaths = WithoutCredentials<HostRolePaths['api']>;

type IngestionSchemas = IngestionComponents['schemas'];
type FeedbackSchemas = FeedbackComponents['schemas'];
type ExperimentSchemas = ExperimentComponents['schemas'];

// Friendly names for the generated component schemas.
export type EventRecord = IngestionSchemas['EventRecord'];
export type EventFields = IngestionSchemas['EventFields'];
export type EventProperties = IngestionSchemas['Properties'];
export type UserProperties = IngestionSchemas['UserProperties'];
export type EventGroups = IngestionSchemas['Groups'];
export type UploadOptions = IngestionSchemas['UploadOptions'];
export type EventUploadRequest = IngestionSchemas['EventUploadRequest'];
export type UploadSuccess = IngestionSchemas['UploadSuccess'];
export type InvalidUploadError = IngestionSchemas['InvalidUploadError'];
export type SilencedUploadError = IngestionSchemas['SilencedUploadError'];
export type ThrottledUploadError = IngestionSchemas['ThrottledUploadError'];
export type GroupIdentification = IngestionSchemas['GroupIdentification'];
export type GroupIdentificationForm = IngestionSchemas['GroupIdentificationForm'];
export type IngestionAck = IngestionSchemas['IngestionAck'];
export type AttributionEvent = IngestionSchemas['AttributionEvent'];
export type AttributionForm = IngestionSchemas['AttributionForm'];
export type ErrorBody = IngestionSchemas['Error'];

export type FeedbackItem = FeedbackSchemas['FeedbackItem'];
export type ConversationPart = FeedbackSchemas['ConversationPart'];
export type FeedbackIngestRequest = FeedbackSchemas['FeedbackIngestRequest'];
export type FeedbackIngestResult = FeedbackSchemas['FeedbackIngestResult'];
export type FeedbackItemError = FeedbackIngestResult['errors'][number];
export type ValidationError = FeedbackSchemas['ValidationError'];

export type UserContext = ExperimentSchemas['UserContext'];
export type Variant = ExperimentSchemas['Variant'];
export type Variants = ExperimentSchemas['Variants'];
export type FlagConfiguration = ExperimentSchemas['FlagConfiguration'];
/** A flag in the evaluation format the official SDKs download (`GET /sdk/v2/flags`). */
export type EvaluationFlag = ExperimentSchemas['EvaluationFlag'];
