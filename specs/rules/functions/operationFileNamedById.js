import { readFileSync } from 'node:fs';
import { basename, dirname, extname, resolve } from 'node:path';
import { parse } from 'yaml';

// Runs on the unresolved root document: every operation is a $ref to a file whose
// base name is the operation's operationId.
export default function operationFileNamedById(operation, _options, context) {
  const ref = operation?.$ref;
  if (typeof ref !== 'string') {
    return [{ message: 'Operation must be a $ref to its own file (operations/<operationId>.yaml).' }];
  }
  const file = resolve(dirname(context.document.source), ref);
  let operationId;
  try {
    operationId = parse(readFileSync(file, 'utf8'))?.operationId;
  } catch (error) {
    return [{ message: `Cannot read operation file ${ref}: ${error.message}` }];
  }
  const name = basename(file, extname(file));
  return operationId === name
    ? []
    : [{ message: `Operation file "${ref}" must be named after its operationId "${operationId}".` }];
}
