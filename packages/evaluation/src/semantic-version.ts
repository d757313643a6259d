// Versions for the `version …` operators, parsed and ordered as experiment-core's
// SemanticVersion: major.minor[.patch[-prerelease]]; a missing patch is 0; a prerelease sorts
// before its release and prereleases compare as strings.
const VERSION = /^(\d+)\.(\d+)(\.(\d+)(-(([-\w]+\.?)*))?)?$/;

export type SemanticVersion = { major: number; minor: number; patch: number; preRelease?: string };

export function parseSemanticVersion(text: string): SemanticVersion | undefined {
  const match = VERSION.exec(text);
  if (!match) return undefined;
  const version: SemanticVersion = { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[4] ?? 0) };
  if (match[6]) version.preRelease = match[6];
  return version;
}

const sign = (a: number | string, b: number | string): number => (a > b ? 1 : a < b ? -1 : 0);

export function compareSemanticVersions(a: SemanticVersion, b: SemanticVersion): number {
  const release = sign(a.major, b.major) || sign(a.minor, b.minor) || sign(a.patch, b.patch);
  if (release !== 0) return release;
  if (a.preRelease === undefined || b.preRelease === undefined) {
    return a.preRelease === b.preRelease ? 0 : a.preRelease === undefined ? 1 : -1;
  }
  return sign(a.preRelease, b.preRelease);
}
