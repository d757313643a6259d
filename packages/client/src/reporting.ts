import type { ReportingComponents } from './generated/roles.js';

type ReportingSchemas = ReportingComponents['schemas'];

// Friendly names for the reporting group's schemas: the values callers pass as `e`, `e2`, `s`
// and the funnel steps (objects; the client sends them as JSON text), and the answers.
export type EventSpecification = ReportingSchemas['EventSpecification'];
export type EventType = ReportingSchemas['EventType'];
export type EventFilter = ReportingSchemas['EventFilter'];
export type EventGroupBy = ReportingSchemas['EventGroupBy'];
export type FilterOperator = ReportingSchemas['FilterOperator'];
export type UserPropertyName = ReportingSchemas['UserPropertyName'];
export type SegmentDefinition = ReportingSchemas['SegmentDefinition'];
export type SegmentCondition = ReportingSchemas['SegmentCondition'];
export type ReportDate = ReportingSchemas['ReportDate'];
export type UserCounts = ReportingSchemas['UserCounts'];
export type SessionLengthDistribution = ReportingSchemas['SessionLengthDistribution'];
export type DailySessionSeries = ReportingSchemas['DailySessionSeries'];
export type UserComposition = ReportingSchemas['UserComposition'];
export type EventTypeSummary = ReportingSchemas['EventTypeSummary'];
export type EventSegmentation = ReportingSchemas['EventSegmentation'];
export type SeriesLabel = ReportingSchemas['SeriesLabel'];
export type FunnelSeries = ReportingSchemas['FunnelSeries'];
export type ReportingLimitError = ReportingSchemas['ReportingLimitError'];
/** One event of a user's activity, written as an Export API line. */
export type UserActivityEvent = ReportingSchemas['UserActivityResult']['events'][number];
