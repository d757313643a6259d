// Starts the Prism mocks once for the whole run (free ports) and hands their URLs to the
// tests through `inject('mockUrls')`.
import type { TestProject } from 'vitest/node';
import { startMocks } from '@svc/mock';

declare module 'vitest' {
  export interface ProvidedContext {
    mockUrls: Record<string, string>;
  }
}

export default async function setup(project: TestProject) {
  const started = Date.now();
  const mocks = await startMocks({
    basePort: 0,
    startTimeoutMs: 60_000,
    log: (line: string) => process.stderr.write(`[mock] ${line}\n`),
  });
  process.stderr.write(`[mock] started in ${Date.now() - started} ms\n`);
  project.provide('mockUrls', mocks.urls);
  return async () => {
    await mocks.stop();
  };
}
