// Property names must be spelled exactly as the interface documents spell them
// (options.names). A near miss (same letters ignoring case, '_' and '-') is reported
// with the expected spelling; an unknown name is reported as such.
const fold = (name) => name.toLowerCase().replace(/[_-]/g, '');

export default function glossarySpelling(properties, options, context) {
  const names = new Set(options.names);
  const byFolded = new Map(options.names.map((name) => [fold(name), name]));
  return Object.keys(properties ?? {})
    .filter((name) => !names.has(name))
    .map((name) => {
      const expected = byFolded.get(fold(name));
      return {
        message: expected
          ? `Property "${name}" is spelled "${expected}" in the interface documents.`
          : `Property "${name}" is not in the glossary (specs/rules/glossary.yaml); add it there only if the documents name it or a documented choice needs it.`,
        path: [...context.path, name],
      };
    });
}
