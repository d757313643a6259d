// Paths carry a version segment (/2/…, /v1/…, /api/3/…, /sdk/v2/… and /sessions/v2/… for the official SDKs' paths) unless options.unversioned lists them.
export default function versionSegment(paths, options) {
  const unversioned = new Set(options.unversioned ?? []);
  return Object.keys(paths ?? {})
    .filter((path) => !unversioned.has(path) && !/^\/(api\/|sdk\/|sessions\/)?v?\d+\//.test(path))
    .map((path) => ({
      message: `Path "${path}" has no version segment (/N/, /vN/, /api/N/ or /sdk/vN/) and is not listed as unversioned.`,
      path: ['paths', path],
    }));
}
