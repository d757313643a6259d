import { describe, expectTypeOf, it } from 'vitest';
import {
  createAppClient,
  exportCohort,
  updateCohortMembership,
  uploadCohort,
  type Annotation,
  type AssignedAnnotation,
  type CohortExport,
  type CohortIdType,
  type CohortMember,
  type MembershipOperation,
  type UploadCohortSummary,
} from '../src/index.js';

const app = createAppClient({ apiKey: 'k', secretKey: 's' });
const upload = { name: 'Beta testers', app_id: 187520, id_type: 'BY_USER_ID', ids: ['ana'], owner: 'ana@example.com', published: true } as const;

describe('cohort helpers', () => {
  it('take only the documented id types, operations and required fields', async () => {
    expectTypeOf<CohortIdType>().toEqualTypeOf<'BY_SVC_ID' | 'BY_USER_ID'>();
    expectTypeOf<MembershipOperation>().toEqualTypeOf<'ADD' | 'REMOVE'>();
    expectTypeOf(await uploadCohort(app, upload)).toEqualTypeOf<UploadCohortSummary>();
    // @ts-expect-error unknown id_type
    void uploadCohort(app, { ...upload, id_type: 'BY_DEVICE_ID' });
    // @ts-expect-error the membership names (BY_ID) are not upload id types
    void uploadCohort(app, { ...upload, id_type: 'BY_ID' });
    const { owner: _owner, ...withoutOwner } = upload;
    // @ts-expect-error owner is required
    void uploadCohort(app, withoutOwner);
    void updateCohortMembership(app, 'c1', [{ ids: ['1'], id_type: 'BY_ID', operation: 'REMOVE' }]);
    // @ts-expect-error operation is ADD or REMOVE
    void updateCohortMembership(app, 'c1', [{ ids: ['1'], id_type: 'BY_ID', operation: 'DELETE' }]);
    // @ts-expect-error the upload id types are not membership id types
    void updateCohortMembership(app, 'c1', [{ ids: ['1'], id_type: 'BY_SVC_ID', operation: 'ADD' }]);
    // @ts-expect-error ids are strings
    void updateCohortMembership(app, 'c1', [{ ids: [1], id_type: 'BY_ID', operation: 'ADD' }]);
  });

  it('type the export', async () => {
    const result = await exportCohort(app, 'c1', { props: true, propKeys: ['city'], sleep: async () => {} });
    expectTypeOf(result).toEqualTypeOf<CohortExport>();
    expectTypeOf(result.members).toEqualTypeOf<CohortMember[]>();
    expectTypeOf(result.members[0]!.user_id).toEqualTypeOf<string | null>();
    // @ts-expect-error props is a boolean; the helper sends 1
    void exportCohort(app, 'c1', { props: 1 });
  });
});

describe('app client, cohorts and annotations', () => {
  it('checks cohort request bodies and parameters', async () => {
    // @ts-expect-error owner is required
    void app.POST('/api/3/cohorts/upload', { body: { name: 'n', app_id: 1, id_type: 'BY_SVC_ID', ids: ['1'], published: false } });
    // @ts-expect-error unknown id_type
    void app.POST('/api/3/cohorts/upload', { body: { ...upload, id_type: 'BY_SVC' } });
    // @ts-expect-error operation is ADD or REMOVE
    void app.POST('/api/3/cohorts/membership', { body: { cohort_id: 'c1', memberships: [{ ids: ['1'], id_type: 'BY_ID', operation: 'UPSERT' }] } });
    // @ts-expect-error props is 0 or 1
    void app.GET('/api/5/cohorts/request/{id}', { params: { path: { id: 'c1' }, query: { props: 2 } } });
    const { data } = await app.GET('/api/5/cohorts/request-status/{request_id}', { params: { path: { request_id: 'r' } } });
    expectTypeOf(data?.async_status).toEqualTypeOf<'JOB INPROGRESS' | 'JOB COMPLETED' | undefined>();
    const listed = await app.GET('/api/3/cohorts', { params: { query: { includeSyncInfo: true } } });
    expectTypeOf(listed.data?.cohorts[0]?.syncMetadata?.[0]?.frequency).toEqualTypeOf<'minute' | 'hourly' | 'daily' | undefined>();
  });

  it('checks annotation bodies, including nulls of the partial update', async () => {
    const created = await app.POST('/api/3/annotations', { body: { label: 'Release 4.2', start: '2026-11-18T14:00Z' } });
    expectTypeOf(created.data?.data).toExtend<Annotation | undefined>();
    expectTypeOf(created.data?.data.category).toEqualTypeOf<{ id: number; name: string } | null | undefined>();
    expectTypeOf(created.data?.data.end).toEqualTypeOf<string | null | undefined>();
    // @ts-expect-error start is required
    void app.POST('/api/3/annotations', { body: { label: 'Release 4.2' } });
    void app.PUT('/api/3/annotations/{annotation_id}', { params: { path: { annotation_id: 1 } }, body: { chart_id: null, end: null } });
    // @ts-expect-error start cannot be removed
    void app.PUT('/api/3/annotations/{annotation_id}', { params: { path: { annotation_id: 1 } }, body: { start: null } });
    // @ts-expect-error annotation IDs are integers
    void app.GET('/api/3/annotations/{annotation_id}', { params: { path: { annotation_id: 'latest' } } });
    const renamed = await app.PUT('/api/3/annotation-categories/{category_id}', { params: { path: { category_id: 12 } }, body: { category: 'Releases' } });
    expectTypeOf(renamed.data?.data).toEqualTypeOf<{ id: number; category: string } | undefined>();
    // @ts-expect-error the body names the category under `category`, not `name`
    void app.POST('/api/3/annotation-categories', { body: { name: 'Releases' } });
    const assigned = await app.PUT('/api/3/annotation-categories/bulk/{category_id}', { params: { path: { category_id: 12 } }, body: { annotation_ids: [1, 2] } });
    expectTypeOf(assigned.data?.data[0]).toExtend<AssignedAnnotation | undefined>();
    expectTypeOf(assigned.data?.data[0]?.category.category).toEqualTypeOf<string | undefined>();
    expectTypeOf<AssignedAnnotation['category']>().toEqualTypeOf<{ id: number; category: string }>();
  });
});
