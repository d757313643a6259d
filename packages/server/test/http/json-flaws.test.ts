// Flaws of a parsed body (json-value.ts): strings are checked only when the text could hold a
// lone surrogate, so each way of writing one is refused, and text without one is accepted.
import { parseJson } from '@svc/openapi-validation';
import { expect, test } from 'vitest';

const flawOf = (text: string) => {
  const parsed = parseJson(text);
  return parsed.ok ? undefined : parsed.errors?.[0]?.instancePath;
};

test.each([
  ['an escaped lone surrogate in a string', '{"a": ["x", "\\ud800"]}', '/a/1'],
  ['an escaped lone surrogate in a key', '{"a": {"\\udc00": 1}}', '/a/\udc00'],
  ['a raw lone surrogate (text not well formed)', `{"a": "x${'\ud800'}"}`, '/a'],
  ['a raw lone surrogate in a key', `{"a": {"${'\udbff'}": 1}}`, `/a/${'\udbff'}`],
  ['a number beyond a double', '{"a": {"b": 1e400}}', '/a/b'],
  ['nesting past the limit', `${'['.repeat(101)}${']'.repeat(101)}`, '/0'.repeat(100)],
])('%s is refused', (_, text, path) => {
  expect(flawOf(text)).toBe(path);
});

test.each([
  ['plain text', '{"a": "é ü 😀", "b": [1, -0, 1e21]}'],
  ['an escaped surrogate pair', '{"a": "\\ud83d\\ude00", "\\ud83d\\ude00": 1}'],
  ['an escaped backslash before a u', '{"a": "\\\\ud800"}'],
])('%s is accepted', (_, text) => {
  expect(parseJson(text).ok).toBe(true);
});
