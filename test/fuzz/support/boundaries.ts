// The values at the edges that hostile clients send and that generated values within a
// schema's bounds rarely reach: integers beyond 64 bits, the smallest double, -0, huge and
// negative numbers, dates of an empty or reversed range, odd strings. Arbitraries for a
// schema mix them in (arbitraries.ts); numbers beyond 2^53 are bigints, written as digits.
import fc from 'fast-check';

const INT64_MAX = 2n ** 63n - 1n;

/** Integers around the limits of int32, int64 and beyond (as the ids a client may send). */
export const boundaryInteger: fc.Arbitrary<number | bigint> = fc.oneof(
  fc.constantFrom<number | bigint>(0, -1, 1, 2 ** 31 - 1, 2 ** 31, -(2 ** 31), 2 ** 32, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, INT64_MAX, INT64_MAX + 1n, -INT64_MAX - 2n),
  // Ids of 20 to 40 digits: beyond int64 (the shrinker finds the shortest that fails).
  fc.bigInt({ min: INT64_MAX + 1n, max: 10n ** 40n }),
);

/** Doubles that parsers treat specially. */
export const boundaryNumber: fc.Arbitrary<number | bigint> = fc.oneof(
  fc.constantFrom(5e-324, -0, -5e-324, 1e308, -1e308, 0.1, 1e-7, 2 ** 53 + 2),
  boundaryInteger,
);

/** Strings that break naive handling: empty, NUL, lone surrogates, long, SQL-ish, path-ish. */
export const boundaryString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', ' ', '\u0000', '\ud800', '\udfff', 'é', '😀', "'; DROP TABLE events; --", '%', '../..', '$identify', 'null', '-0', '5e-324', '1e999'),
  fc.integer({ min: 256, max: 4096 }).map((n) => 'x'.repeat(n)),
);

/** Days (YYYYMMDD) near today, where the seeded events are, and far from it. */
export function reportDays(now = Date.now()): fc.Arbitrary<string> {
  const day = (offsetDays: number) => new Date(now + offsetDays * 86_400_000).toISOString().slice(0, 10).replaceAll('-', '');
  // End before start and start equal to end (an empty range) come from drawing both from these.
  const near = fc.integer({ min: -40, max: 2 }).map(day);
  return fc.oneof({ arbitrary: near, weight: 4 }, fc.constantFrom('19700101', '00010101', '99991231', '20240229', '20250229', '20260431', '29991231'));
}

/** Names the seeded events have (event types, properties, users), so that reporting answers are not all empty. */
export const SEEDED = {
  eventTypes: ['View Item', 'Add to Cart', 'Purchase', 'Search', 'Open App'],
  userProperties: ['plan', 'cohort'],
  eventProperties: ['item_id', 'price_tier'],
  columns: ['country', 'platform', 'city', 'version'],
  users: ['fuzz-user-0', 'fuzz-user-1', 'fuzz-user-2'],
};

/** Strings: seeded names often, boundary strings sometimes, arbitrary text otherwise. */
export const text: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...SEEDED.eventTypes, ...SEEDED.userProperties, ...SEEDED.eventProperties, ...SEEDED.columns, ...SEEDED.users), weight: 3 },
  { arbitrary: fc.string({ maxLength: 24 }), weight: 2 },
  { arbitrary: boundaryString, weight: 1 },
);

/** Bytes that are not UTF-8: a lone continuation byte, an overlong form, a truncated sequence, 0xFF. */
export const nonUtf8: fc.Arbitrary<Uint8Array<ArrayBuffer>> = fc
  .tuple(fc.constantFrom([0x80], [0xc0, 0xaf], [0xe2, 0x82], [0xff, 0xfe], [0xed, 0xa0, 0x80]), fc.string({ maxLength: 16 }))
  .map(([bad, prefix]) => Uint8Array.from([...Buffer.from(`{"x":"${prefix}`), ...bad, ...Buffer.from('"}')]));

/** A header value over Node's 16 KiB header limit, or just under it. */
export const longHeaderValue: fc.Arbitrary<string> = fc.integer({ min: 8 * 1024, max: 40 * 1024 }).map((n) => 'h'.repeat(n));
