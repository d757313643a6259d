// After `changeset version`: the Python wheel (pyproject.toml) and the Go module (version.go)
// take @svc/client's version, so that one SDK release has one version in every language.
import { readFileSync, writeFileSync } from 'node:fs';

const root = new URL('../', import.meta.url);
const { version } = JSON.parse(readFileSync(new URL('packages/client/package.json', root), 'utf8'));
const rewrite = (path, pattern, replacement) => {
  const file = new URL(path, root);
  const text = readFileSync(file, 'utf8');
  if (!pattern.test(text)) throw new Error(`${path}: no version to set`);
  writeFileSync(file, text.replace(pattern, replacement));
};
rewrite('packages/sdk-python/pyproject.toml', /^version = "[^"]+"/m, `version = "${version}"`);
rewrite('packages/sdk-go/version.go', /const Version = "[^"]+"/, `const Version = "${version}"`);
console.log(`SDK version ${version}: packages/sdk-python/pyproject.toml, packages/sdk-go/version.go`);
