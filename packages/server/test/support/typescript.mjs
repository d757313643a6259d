// Lets processes started from the TypeScript sources (the storage engine's, which inherits
// this flag) run them: vitest transforms the files it imports itself, not those a child imports.
import { register } from 'node:module';

register('./typescript-hooks.mjs', import.meta.url);
