// Lets worker threads started from the TypeScript sources (the storage engine's thread) run
// them: vitest transforms the files it imports itself, not those a worker imports.
import { register } from 'node:module';

register('./typescript-hooks.mjs', import.meta.url);
