export {
  createApiClient,
  createAppClient,
  createExperimentClient,
  createIngestClient,
  resolveBaseUrl,
  type ApiClient,
  type ApiClientOptions,
  type AppClient,
  type AppClientOptions,
  type ClientBaseOptions,
  type ExperimentClient,
  type ExperimentClientOptions,
  type IngestClient,
  type IngestClientOptions,
  type Region,
  type SvcCredentials,
} from './clients.js';
export {
  MAX_EVENTS_PER_REQUEST,
  MAX_UPLOAD_BYTES,
  uploadEvents,
  type UploadErrorBody,
  type UploadEventsOptions,
  type UploadEventsSummary,
  type UploadFailure,
} from './upload.js';
export {
  MAX_FEEDBACK_BYTES,
  MAX_FEEDBACK_ITEMS_PER_REQUEST,
  ingestFeedback,
  type FeedbackErrorBody,
  type IngestFeedbackOptions,
  type IngestFeedbackSummary,
  type FeedbackFailure,
} from './feedback.js';
export { createOperationQuerySerializer, encodeForm } from './serialize.js';
export { RETRY_STATUSES, type BatchFailure } from './batching.js';
export type * from './types.js';
export type { OperationRule, CredentialLocation, PaginationRule, SecuritySchemeRule } from './rule-types.js';
export { operationRules } from './generated/rules.js';
export { servers } from './generated/servers.js';
export { groups, type HostRole, type HostRolePaths } from './generated/roles.js';
export type * from './generated/roles.js';
export {
  WEBHOOK_TOLERANCE_SECONDS,
  WebhookVerificationError,
  newWebhookSecret,
  signWebhook,
  verifyWebhook,
  type VerifyWebhookOptions,
} from './webhooks.js';
export {
  MAX_EXPORT_HOURS,
  exportEvents,
  exportHalves,
  exportHour,
  exportHourMs,
  exportPart,
  exportParts,
  zipEntries,
  type ExportEventsOptions,
  type ExportPart,
  type ExportedEvent,
} from './export-events.js';
export {
  REVENUE_PROPERTIES,
  convertExportedEvent,
  exportTimeMs,
  importFromExport,
  type Converted,
  type GroupIdentification,
  type ImportFromExportOptions,
  type ImportFromExportSummary,
  type UploadEvent,
} from './export-import.js';
export {
  decodeReplayFile,
  downloadReplay,
  listReplayFiles,
  listReplays,
  type DownloadReplayOptions,
  type ListReplayFilesOptions,
  type ListReplaysOptions,
  type ListReplaysParams,
  type RecordedEvent,
  type ReplayFileVersion,
  type SessionReplay,
} from './replays.js';
export {
  MAX_IDS_PER_DELETION_REQUEST,
  MAX_PARALLEL_DELETION_REQUESTS,
  MIN_DELETION_REQUEST_INTERVAL_MS,
  deleteUsers,
  type DeleteUsersFields,
  type DeleteUsersOptions,
  type DeleteUsersSummary,
  type DeletionErrorBody,
  type DeletionFailure,
  type DeletionJob,
  type DeletionJobEntry,
  type DeletionRequestError,
  type UserIdentifier,
} from './deletion.js';
export { systemClock, type Clock } from './pacing.js';
export {
  AuthenticationError,
  BadRequestError,
  ConflictError,
  ConnectionError,
  InternalServerError,
  NotFoundError,
  PayloadTooLargeError,
  PermissionDeniedError,
  RateLimitError,
  ResponseError,
  SvcError,
  TimeoutError,
  responseError,
  retryAfterMs,
} from './errors.js';
export type { CallOptions, CallResult, SvcClient } from './client-types.js';
export { maskBody, maskHeaders, maskUrl, type Logger } from './logging.js';
export { INITIAL_BACKOFF_MS, MAX_BACKOFF_MS, MAX_RETRY_AFTER_MS, backoffMs, isRetryableStatus } from './transport.js';
export type { ArrayStyle } from './rule-types.js';
export type * from './taxonomy.js';
export {
  MAX_COHORT_SIZE,
  MAX_IDS_PER_REQUEST,
  type Cohort,
  type CohortDefinition,
  type CohortError,
  type CohortExportRequest,
  type CohortExportStatus,
  type CohortIdType,
  type CohortSync,
  type CohortUpload,
  type CohortUploadResult,
  type MembershipChange,
  type MembershipIdType,
  type MembershipOperation,
  type MembershipUpdate,
  type MembershipUpdateResult,
} from './cohort-types.js';
export {
  CohortExportError,
  exportCohort,
  parseCohortCsv,
  type CohortExport,
  type CohortExportStage,
  type CohortMember,
  type ExportCohortOptions,
} from './cohort-export.js';
export {
  updateCohortMembership,
  uploadCohort,
  type CohortRequestFailure,
  type MembershipChangeInput,
  type MembershipChangeSummary,
  type UpdateCohortMembershipOptions,
  type UpdateCohortMembershipSummary,
  type UploadCohortInput,
  type UploadCohortOptions,
  type UploadCohortSummary,
} from './cohort-upload.js';
export { parseCsv } from './csv.js';
export {
  MAX_DELETION_LISTING_DAYS,
  listAnnotationCategories,
  listAnnotations,
  listCohorts,
  listDeletionJobs,
  listEventCategories,
  listEventProperties,
  listEventTypeTotals,
  listEventTypes,
  listUserEvents,
  listUserProperties,
  type ListAnnotationCategoriesParams,
  type ListAnnotationsParams,
  type ListCohortsParams,
  type ListDeletionJobsParams,
  type ListEventPropertiesParams,
  type ListEventTypesParams,
  type ListUserEventsParams,
} from './lists.js';
export { listFlags, listSdkFlags, type ListFlagsParams } from './flags.js';
export type { Answers, ListOptions, Listing } from './paging.js';
export type { CallPromise, SuccessData, WithResponse } from './raw.js';
export type * from './annotation-types.js';
export type * from './reporting.js';
