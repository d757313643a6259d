// What changed in one API between two bundles, as Optic (@useoptic/optic, its breaking-changes
// standard) reports it: the breaking changes it finds, plus an operationId changed (which
// Optic lists as a change, not a break, but breaks every generated client's method name), and
// every change listed per operation for a changelog.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { binPath } from './run.mjs';

const optic = (args) =>
  spawnSync(binPath('optic'), ['diff', ...args], { encoding: 'utf8', env: { ...process.env, OPTIC_TELEMETRY_LEVEL: 'off', NO_COLOR: '1', FORCE_COLOR: '0' }, maxBuffer: 64 * 2 ** 20 });

/** `1.2.3` as numbers (missing parts 0). */
const versionOf = (text) => String(text).split('.').map((part) => Number.parseInt(part, 10) || 0);
/** Negative, zero or positive as `a` is below, equal to or above `b`. */
export function compareVersions(a, b) {
  const [x, y] = [versionOf(a), versionOf(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}

/** One change of an operation in words, e.g. `query parameter 'newq' added`. */
const describe = (item, what) => `${item.name ?? what} ${item.change}`;

/** The changes Optic's JSON lists, one line per change, by operation. */
function changeLines(report) {
  const lines = [];
  for (const operation of report.operations ?? []) {
    const parts = [
      ...(operation.attributes ?? []).map((a) => `${a.key.replace(/^\//, '') || 'operation'} ${a.change}`),
      ...(operation.parameters ?? []).map((p) => describe(p, 'parameter')),
      ...(operation.requestBody ? [describe(operation.requestBody, 'request body')] : []),
      ...(operation.responses ?? []).map((r) => describe(r, 'response')),
    ].map((part) => part.trim());
    lines.push(`${operation.name}: ${operation.change}${parts.length > 0 ? ` (${parts.join('; ')})` : ''}`);
  }
  return lines;
}

/**
 * The changes from the bundle at `basePath` to the one at `headPath` (JSON or YAML): `breaking` (Optic's
 * failed checks, and operationIds changed), `changes` (every change, a line per operation),
 * and both documents' `info.version`.
 */
export function apiChanges(basePath, headPath) {
  const [base, head] = [basePath, headPath].map((path) => parse(readFileSync(path, 'utf8')));
  const versions = { base: base.info.version, head: head.info.version };
  if (JSON.stringify(base) === JSON.stringify(head)) return { breaking: [], changes: [], versions };
  const listed = optic([basePath, headPath, '--check', '--json']);
  if (listed.error) throw listed.error;
  const report = JSON.parse(listed.stdout.slice(listed.stdout.indexOf('{')));
  const breaking = [];
  for (const operation of report.operations ?? []) {
    for (const attribute of operation.attributes ?? []) {
      if (attribute.key === '/operationId' && attribute.change !== 'added') breaking.push(`${operation.name}: operationId ${attribute.change} (${attribute.before ?? '-'} → ${attribute.after ?? '-'}): every generated client's method is renamed`);
    }
  }
  if (listed.status !== 0) {
    // The checks' failures are printed in the text report: each `x [rule] message` under its operation.
    const text = optic([basePath, headPath, '--check']).stdout;
    let operation = '';
    for (const line of text.split('\n')) {
      const heading = /^\s*x (GET|PUT|POST|DELETE|PATCH|HEAD|OPTIONS|TRACE) (\S+):/.exec(line);
      if (heading) operation = `${heading[1]} ${heading[2]}`;
      const failed = /^\s*x \[([^\]]+)\] (.*)$/.exec(line);
      if (failed) breaking.push(`${operation || 'the document'}: ${failed[2]} [${failed[1]}]`);
    }
    if (!breaking.some((line) => !line.includes('operationId'))) breaking.push(`Optic's checks failed (exit ${listed.status}): ${(listed.stderr || text).trim().split('\n').slice(-3).join(' ')}`);
  }
  return { breaking: [...new Set(breaking)], changes: changeLines(report), versions };
}

/**
 * The verdict on one API: a breaking change fails unless the major version went up; any other
 * change needs a higher version. `problems` say why it fails; `entry` is its changelog entry.
 */
export function verdict(name, { breaking, changes, versions }) {
  const problems = [];
  const [baseMajor, headMajor] = [versionOf(versions.base)[0], versionOf(versions.head)[0]];
  if (breaking.length > 0 && headMajor <= baseMajor) {
    problems.push(`${name}: ${breaking.length} breaking change(s) since ${versions.base} (a new major version, not ${versions.head}, would be needed):\n${breaking.map((line) => `  - ${line}`).join('\n')}`);
  } else if ((changes.length > 0 || breaking.length > 0) && compareVersions(versions.head, versions.base) <= 0) {
    problems.push(`${name}: changed since ${versions.base} but info.version is ${versions.head}: raise it (a minor version for additions, a patch for fixes)`);
  }
  const entry = changes.length === 0 ? '' : `### ${name} ${versions.head}\n\n${changes.map((line) => `- ${line}`).join('\n')}\n`;
  return { problems, entry };
}
