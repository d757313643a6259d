// The reader of one JSON object's top-level members (json-members.ts): each key and value as a
// byte range of the text, whatever the strings and nested values hold, and a SyntaxError for
// what is not one object.
import { expect, test } from 'vitest';
import { JsonMembers, KEY_ESCAPED, VALUE_ESCAPED } from '../../../src/store/clickhouse/json-members.js';

/** The members as [key text, value text, flags], the text cut from the bytes. */
function members(text: string, padding = ''): [string, string, number][] {
  const bytes = Buffer.from(`${padding}${text}${padding}`);
  const read = new JsonMembers().read(bytes, Buffer.byteLength(padding), bytes.length - Buffer.byteLength(padding));
  return Array.from({ length: read.count }, (_, i) => [
    bytes.toString('utf8', read.keyStarts[i], read.keyEnds[i]),
    bytes.toString('utf8', read.valueStarts[i], read.valueEnds[i]),
    read.flags[i]!,
  ]);
}

test('each member of an object written by JSON.stringify: its key and its value as their text', () => {
  const object = { a: 1, s: 'text', n: null, t: true, f: false, o: { x: [1, { y: 'z' }] }, l: [], e: {}, neg: -2.5e-7, big: 1e21 };
  expect(members(JSON.stringify(object))).toEqual(Object.entries(object).map(([key, value]) => [key, JSON.stringify(value), 0]));
});

test('an empty object has no members', () => {
  expect(members('{}')).toEqual([]);
  expect(members(' { } ')).toEqual([]);
});

test('escaped quotes and backslashes in keys and strings end nothing early, and are flagged', () => {
  const object = { 'a"b': 'q"uote', 'back\\slash': 'x\\', 'end\\': '\\"', plain: 'after' };
  expect(members(JSON.stringify(object))).toEqual([
    ['a\\"b', '"q\\"uote"', KEY_ESCAPED | VALUE_ESCAPED],
    ['back\\\\slash', '"x\\\\"', KEY_ESCAPED | VALUE_ESCAPED],
    ['end\\\\', '"\\\\\\""', KEY_ESCAPED | VALUE_ESCAPED],
    ['plain', '"after"', 0],
  ]);
});

test('braces, brackets, commas and colons inside strings are text, at the top and nested', () => {
  const object = { '{k}': '}{][,:', nested: { '}': ['"]', '{'], deeper: [[{ a: '[' }]] }, last: 1 };
  const read = members(JSON.stringify(object));
  expect(read.map(([key]) => key)).toEqual(['{k}', 'nested', 'last']);
  expect(read.map(([, value]) => JSON.parse(value) as unknown)).toEqual(Object.values(object));
});

test('unicode: UTF-8 bytes as they are, \\u escapes flagged (lone surrogates as JSON.stringify writes them)', () => {
  const read = members(JSON.stringify({ 'ключ 😀': 'héllo 世界', esc: '\u0001\ud800', 'k\u001f': 'x' }));
  expect(read).toEqual([
    ['ключ 😀', '"héllo 世界"', 0],
    ['esc', '"\\u0001\\ud800"', VALUE_ESCAPED],
    ['k\\u001f', '"x"', KEY_ESCAPED],
  ]);
});

test('nulls, numbers with exponents and signs, and whitespace between members', () => {
  expect(members('{ "a" : null , "b":-0,"c":1.5E+300, "d" :2e-5,"e":[ 1 , 2 ]\t}\n', '  ')).toEqual([
    ['a', 'null', 0],
    ['b', '-0', 0],
    ['c', '1.5E+300', 0],
    ['d', '2e-5', 0],
    ['e', '[ 1 , 2 ]', 0],
  ]);
});

test('the same reader reads object after object, more members than it first had room for', () => {
  const reader = new JsonMembers();
  const many = Buffer.from(JSON.stringify(Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`k${i}`, i]))));
  expect(reader.read(many, 0, many.length).count).toBe(200);
  expect(reader.keyEnds[199]! - reader.keyStarts[199]!).toBe(4);
  const one = Buffer.from('{"only":"x"}');
  expect(reader.read(one, 0, one.length).count).toBe(1);
  expect(reader.flags[0]).toBe(0);
});

test('what is not one whole object is a SyntaxError', () => {
  for (const text of ['', '[1]', '"s"', '{', '{"a"}', '{"a":}', '{"a":1,}', '{"a":1 "b":2}', '{"a":tru}', '{"a":"open}', '{"a":{"b":[1}]}', '{"a":[1,2}', '{"a":1}x', '{"a":1}{}', '{a:1}'])
    expect(() => members(text), text).toThrow(SyntaxError);
});
