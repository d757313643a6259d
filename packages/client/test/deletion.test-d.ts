import { describe, expectTypeOf, it } from 'vitest';
import {
  createAppClient,
  createIngestClient,
  deleteUsers,
  type DeleteUsersSummary,
  type DeletionJob,
  type UserIdentifier,
} from '../src/index.js';

const app = createAppClient({ apiKey: 'k', secretKey: 's' });

describe('deleteUsers', () => {
  it('takes service IDs and user IDs mixed, and the request fields', () => {
    expectTypeOf(deleteUsers(app, [510384112467, 'dana-3391'])).toEqualTypeOf<Promise<DeleteUsersSummary>>();
    expectTypeOf<UserIdentifier>().toEqualTypeOf<number | string>();
    deleteUsers(app, ['a'], {
      fields: { requester: 'dpo@example.com', ignore_invalid_ids: true, delete_from_org: false, include_mapped_user_ids: true },
      concurrency: 4,
      clock: { now: () => 0, sleep: async () => undefined },
    });
    deleteUsers(app, ['a'], { fields: { ignore_invalid_id: true } });
  });

  it('types the summary', () => {
    expectTypeOf<DeleteUsersSummary['jobs']>().toEqualTypeOf<DeletionJob[]>();
    expectTypeOf<DeletionJob['status']>().toEqualTypeOf<'Staging' | 'Submitted' | 'Done'>();
    expectTypeOf<DeleteUsersSummary['failures'][number]['ids']>().toEqualTypeOf<UserIdentifier[]>();
    expectTypeOf<DeleteUsersSummary['failures'][number]['status']>().toEqualTypeOf<number | null>();
  });

  it('rejects misuse', () => {
    // @ts-expect-error an ID is a number or a string
    deleteUsers(app, [true]);
    // @ts-expect-error IDs are a list
    deleteUsers(app, 'dana-3391');
    // @ts-expect-error delete_from_org is a boolean
    deleteUsers(app, ['a'], { fields: { delete_from_org: 'yes' } });
    // @ts-expect-error the IDs are the second argument, not fields
    deleteUsers(app, ['a'], { fields: { user_ids: ['b'] } });
    // @ts-expect-error unknown request field
    deleteUsers(app, ['a'], { fields: { delete_everything: true } });
    // @ts-expect-error a clock needs sleep
    deleteUsers(app, ['a'], { clock: { now: () => 0 } });
    // @ts-expect-error deletion is served by the application host
    deleteUsers(createIngestClient({ apiKey: 'k' }), ['a']);
  });
});
