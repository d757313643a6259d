import type { CohortsComponents } from './generated/roles.js';

type Schemas = CohortsComponents['schemas'];

// Friendly names for the generated cohort schemas.
export type Cohort = Schemas['Cohort'];
export type CohortDefinition = Schemas['CohortDefinition'];
export type CohortSync = Schemas['CohortSync'];
export type CohortExportRequest = Schemas['CohortExportRequest'];
export type CohortExportStatus = Schemas['CohortExportStatus'];
export type CohortUpload = Schemas['CohortUpload'];
export type CohortUploadResult = Schemas['CohortUploadResult'];
export type CohortError = Schemas['CohortError'];
export type MembershipUpdate = Schemas['MembershipUpdate'];
export type MembershipChange = Schemas['MembershipChange'];
export type MembershipUpdateResult = Schemas['MembershipUpdateResult'];

/** `BY_SVC_ID` or `BY_USER_ID`: the kind of ID an upload carries. */
export type CohortIdType = CohortUpload['id_type'];
/** `BY_ID` or `BY_NAME`: the kind of ID a membership change carries. */
export type MembershipIdType = MembershipChange['id_type'];
/** `ADD` or `REMOVE`. */
export type MembershipOperation = MembershipChange['operation'];

/** Most IDs one upload or membership request may carry. */
export const MAX_IDS_PER_REQUEST = 100_000;
/** Most members a cohort may have. */
export const MAX_COHORT_SIZE = 2_000_000;
