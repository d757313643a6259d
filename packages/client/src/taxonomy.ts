// Friendly names for the taxonomy schemas (event schema planning on the application host).
import type { TaxonomyComponents } from './generated/roles.js';

type TaxonomySchemas = TaxonomyComponents['schemas'];

export type TaxonomyEventCategory = TaxonomySchemas['EventCategory'];
export type TaxonomyEventType = TaxonomySchemas['EventType'];
export type TaxonomyEventProperty = TaxonomySchemas['EventProperty'];
export type TaxonomyUserProperty = TaxonomySchemas['UserProperty'];
export type TaxonomyPropertyDataType = TaxonomySchemas['PropertyDataType'];
export type TaxonomyClassification = TaxonomySchemas['Classifications'][number];
/** The body of every taxonomy failure: `{ success: false, errors: [{ message }] }`. */
export type TaxonomyErrorBody = TaxonomySchemas['TaxonomyError'];
export type EventTypeCreateForm = TaxonomySchemas['EventTypeCreateForm'];
export type EventTypeUpdateForm = TaxonomySchemas['EventTypeUpdateForm'];
export type EventPropertyCreateForm = TaxonomySchemas['EventPropertyCreateForm'];
export type EventPropertyUpdateForm = TaxonomySchemas['EventPropertyUpdateForm'];
export type UserPropertyCreateForm = TaxonomySchemas['UserPropertyCreateForm'];
export type UserPropertyUpdateForm = TaxonomySchemas['UserPropertyUpdateForm'];
