// The tracking plan's rules without storage: kinds, the delete/restore states table, hidden
// flags, and where an event property goes (shared, override, own property).
import { expect, test } from 'vitest';
import { afterDeletion, afterRestoration, hiddenFlagOnPlanned, kindOf, newEntry, Refusal } from '../../src/taxonomy/event-types.js';
import { applyDefinition, applyEventPropertyFields, newDefinition, placeEventProperty, renameEventProperty } from '../../src/taxonomy/properties.js';

const planned = newEntry('Search');

test('the kind follows from the plan entry and from ingestion', () => {
  expect(kindOf(undefined, false)).toBeUndefined();
  expect(kindOf(undefined, true)).toBe('unexpected');
  expect(kindOf(planned, false)).toBe('planned');
  expect(kindOf(planned, true)).toBe('live');
  expect(kindOf({ ...planned, transformedFrom: 'search' }, true)).toBe('transformed');
  expect(kindOf({ ...planned, deleted: true }, true)).toBe('deleted');
});

test('delete and restore follow the states table', () => {
  expect(afterDeletion('Search', planned, 'live')).toEqual({ ...planned, deleted: true });
  expect(afterDeletion('Search', undefined, 'unexpected')).toEqual({ ...newEntry('Search'), planned: true, deleted: true });
  expect(afterDeletion('Search', planned, 'planned')).toBeNull();
  for (const kind of ['transformed', 'deleted', undefined] as const) expect(afterDeletion('Search', planned, kind)).toBeInstanceOf(Refusal);
  expect(afterRestoration('Search', { ...planned, deleted: true }, 'deleted')).toEqual(planned);
  for (const kind of ['live', 'unexpected', 'planned', 'transformed', undefined] as const) expect(afterRestoration('Search', planned, kind)).toBeInstanceOf(Refusal);
});

test('hidden flags may be sent for ingested event types only', () => {
  expect(hiddenFlagOnPlanned({ is_hidden_from_timeline: false }, 'planned')).toBe('is_hidden_from_timeline');
  expect(hiddenFlagOnPlanned({ is_hidden_from_timeline: true }, undefined)).toBe('is_hidden_from_timeline');
  expect(hiddenFlagOnPlanned({ is_hidden_from_timeline: true }, 'unexpected')).toBeUndefined();
  expect(hiddenFlagOnPlanned({ description: 'x' }, 'planned')).toBeUndefined();
});

test('an event property is shared, an override, or its event type’s own', () => {
  const shared = placeEventProperty('cart_value', null, []);
  expect(shared).toMatchObject({ eventType: null, override: false });
  const own = placeEventProperty('coupon', 'Buy', []);
  expect(own).toMatchObject({ eventType: 'Buy', override: false });
  expect(placeEventProperty('cart_value', 'Buy', [shared as never])).toMatchObject({ eventType: 'Buy', override: true });
  expect(placeEventProperty('coupon', 'Play', [own as never])).toMatchObject({ eventType: 'Play', override: true });
  expect(placeEventProperty('coupon', 'Buy', [own as never])).toBeInstanceOf(Refusal);
  expect(placeEventProperty('cart_value', null, [shared as never])).toBeInstanceOf(Refusal);
});

test('definitions: type rules, classifications only on shared properties, is_hidden only when ingested', () => {
  const enumerated = applyDefinition(newDefinition('plan'), { type: 'enum', enum_values: ['basic', 'pro'] });
  expect(enumerated).toMatchObject({ type: 'enum', enumValues: ['basic', 'pro'] });
  expect(applyDefinition(enumerated as never, { type: 'string' })).toMatchObject({ type: 'string', enumValues: null });
  expect(applyDefinition(newDefinition('plan'), { regex: '^a' })).toBeInstanceOf(Refusal);
  expect(applyDefinition(newDefinition('plan'), { type: 'number', enum_values: ['1'] })).toBeInstanceOf(Refusal);
  const override = { ...newDefinition('cart_value'), eventType: 'Buy', override: true, isRequired: false, isHidden: false };
  expect(applyEventPropertyFields(override, { classifications: ['PII'] }, true)).toBeInstanceOf(Refusal);
  expect(applyEventPropertyFields({ ...override, eventType: null, override: false }, { classifications: ['PII'] }, true)).toMatchObject({ classifications: ['PII'] });
  expect(applyEventPropertyFields(override, { is_hidden: true }, false)).toBeInstanceOf(Refusal);
  expect(applyEventPropertyFields(override, { is_hidden: true }, true)).toMatchObject({ isHidden: true });
});

test('renaming a shared property takes its overrides along; an override cannot be renamed', () => {
  const base = { ...newDefinition('cart_value'), isRequired: false, isHidden: false };
  const shared = { ...base, eventType: null, override: false };
  const override = { ...base, eventType: 'Buy', override: true };
  const own = { ...base, eventType: 'Play', override: false };
  expect(renameEventProperty(shared, 'cart_total', [shared, override, own], [])).toEqual([
    { ...shared, name: 'cart_total' },
    { ...override, name: 'cart_total' },
  ]);
  expect(renameEventProperty(shared, 'cart_total', [shared], [{ ...own, name: 'cart_total' }])).toBeInstanceOf(Refusal);
  expect(renameEventProperty(override, 'cart_total', [shared, override], [])).toBeInstanceOf(Refusal);
  expect(renameEventProperty(own, 'cart_total', [own], [{ ...shared, name: 'cart_total' }])).toEqual([{ ...own, name: 'cart_total', override: true }]);
});
