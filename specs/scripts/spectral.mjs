import { readFileSync } from 'node:fs';
import spectralCore from '@stoplight/spectral-core';
import parsers from '@stoplight/spectral-parsers';
import refResolver from '@stoplight/spectral-ref-resolver';
import { rulesetFor } from '../rules/ruleset.js';

const { Spectral, Document } = spectralCore;
const { Yaml, Json } = parsers;
const { httpAndFileResolver } = refResolver;

/**
 * Lints one OpenAPI file (YAML or JSON, $refs to other files resolved) with our ruleset;
 * `kind` is 'sources' for a split root document, 'bundles' for a bundle.
 */
export async function lintFile(path, kind) {
  const spectral = new Spectral({ resolver: httpAndFileResolver });
  spectral.setRuleset(rulesetFor(kind));
  const parser = path.endsWith('.json') ? Json : Yaml;
  const document = new Document(readFileSync(path, 'utf8'), parser, path);
  return spectral.run(document);
}
