import { describe, expectTypeOf, it } from 'vitest';
import {
  createAppClient,
  type ErrorBody,
  type TaxonomyClassification,
  type TaxonomyErrorBody,
  type TaxonomyEventProperty,
  type TaxonomyEventType,
} from '../src/index.js';

const app = createAppClient({ apiKey: 'k', secretKey: 's' });

describe('taxonomy calls', () => {
  it('take plain objects: lists as arrays, booleans as booleans', () => {
    void app.POST('/api/2/taxonomy/event', { body: { event_type: 'Checkout Completed', tags: ['checkout'], is_active: true } });
    // @ts-expect-error tags is a list; the client joins it
    void app.POST('/api/2/taxonomy/event', { body: { event_type: 'Checkout Completed', tags: 'checkout,web' } });
    // @ts-expect-error is_active is a boolean, not its text
    void app.POST('/api/2/taxonomy/event', { body: { event_type: 'Checkout Completed', is_active: 'true' } });
  });

  it('reject a missing required field', () => {
    // @ts-expect-error event_type is required
    void app.POST('/api/2/taxonomy/event', { body: { category: 'Checkout Flow' } });
    // @ts-expect-error event_property is required
    void app.POST('/api/2/taxonomy/event-property', { body: { event_type: 'Checkout Completed' } });
    // @ts-expect-error category_name is required
    void app.POST('/api/2/taxonomy/category', { body: {} });
    // @ts-expect-error user_property is required
    void app.POST('/api/2/taxonomy/user-property', { body: { type: 'string' } });
  });

  it('reject classifications and property types outside their enums', () => {
    void app.POST('/api/2/taxonomy/event-property', { body: { event_property: 'cart_value', classifications: ['REVENUE', 'PII'] } });
    // @ts-expect-error SECRET is not a classification
    void app.POST('/api/2/taxonomy/event-property', { body: { event_property: 'cart_value', classifications: ['SECRET'] } });
    // @ts-expect-error pii must be written PII
    void app.PUT('/api/2/taxonomy/user-property/{user_property}', { params: { path: { user_property: 'gp:plan' } }, body: { classifications: ['pii'] } });
    // @ts-expect-error date is not a property type
    void app.POST('/api/2/taxonomy/event-property', { body: { event_property: 'signup_day', type: 'date' } });
    expectTypeOf<TaxonomyClassification>().toEqualTypeOf<'PII' | 'SENSITIVE' | 'REVENUE'>();
  });

  it('reject unknown paths and methods', () => {
    // @ts-expect-error no such path (the path is /api/2/taxonomy/event)
    void app.GET('/api/2/taxonomy/events');
    // @ts-expect-error no such path (taxonomy is version 2)
    void app.GET('/api/3/taxonomy/category');
    // @ts-expect-error restore is a POST
    void app.GET('/api/2/taxonomy/event/{event_type}/restore', { params: { path: { event_type: 'Checkout Completed' } } });
  });

  it('type the shared category segment per method: a name to read, an integer ID to update or delete', () => {
    void app.GET('/api/2/taxonomy/category/{category}', { params: { path: { category: 'Checkout Flow' } } });
    void app.DELETE('/api/2/taxonomy/category/{category}', { params: { path: { category: 412 } } });
    // @ts-expect-error update takes the category ID, not its name
    void app.PUT('/api/2/taxonomy/category/{category}', { params: { path: { category: 'Checkout Flow' } }, body: { category_name: 'Checkout' } });
  });

  it('type answers and the error envelope', async () => {
    const { data, error } = await app.GET('/api/2/taxonomy/event/{event_type}', { params: { path: { event_type: 'Checkout Completed' } } });
    expectTypeOf(data?.data).toEqualTypeOf<TaxonomyEventType | undefined>();
    // 408 and 431 come before the operation is known, in the service-wide error body.
    expectTypeOf(error).toEqualTypeOf<TaxonomyErrorBody | ErrorBody | undefined>();
    expectTypeOf<TaxonomyEventType['tags']>().toEqualTypeOf<string[]>();
    expectTypeOf<TaxonomyEventProperty['event_type']>().toEqualTypeOf<string | null>();
    expectTypeOf<TaxonomyErrorBody['success']>().toEqualTypeOf<false>();
  });
});
