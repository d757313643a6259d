#!/usr/bin/env node
// `svc-sdk-services -- COMMAND ARGS…` starts the Prism mocks of every host role and the reference
// server (in this process, on a temporary data directory, with a fresh project and deployment),
// runs COMMAND with their addresses and keys in its environment, stops everything and exits
// with COMMAND's status. The SDK tests in other languages read:
//   SVC_MOCK_URLS      JSON { hostRole: base URL } of the mocks
//   SVC_SDK_CALLS      path of dist/calls.json (one example-built call per operation)
//   SVC_SERVER_URLS    JSON { hostRole: base URL } of the reference server
//   SVC_API_KEY, SVC_SECRET_KEY, SVC_DEPLOYMENT_KEY   the project's keys on that server
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMocks } from '@svc/mock';
import { startServer } from '@svc/server';
import { callsFile } from '../src/generate.mjs';

const separator = process.argv.indexOf('--');
const [command, ...args] = separator < 0 ? [] : process.argv.slice(separator + 1);
if (!command) {
  console.error('usage: svc-sdk-services -- COMMAND [ARGS…]');
  process.exit(2);
}

const workDir = mkdtempSync(join(tmpdir(), 'svc-sdk-'));
const mocks = await startMocks({ basePort: 0, log: null, outDir: join(workDir, 'mock') });
let server;
let status = 1;
try {
  server = await startServer({ dataDir: join(workDir, 'server'), host: '127.0.0.1', port: 0, loadIntervalMs: 200, logger: false });
  const org = server.tenancy.createOrganization('SDK test organization');
  const project = server.tenancy.createProject(org.id, 'SDK test project');
  const deployment = server.tenancy.createDeployment(project.app_id, 'sdk-test-deployment');
  const env = {
    ...process.env,
    SVC_MOCK_URLS: JSON.stringify(mocks.urls),
    SVC_SDK_CALLS: callsFile,
    SVC_SERVER_URLS: JSON.stringify(server.urls),
    SVC_API_KEY: project.api_key,
    SVC_SECRET_KEY: project.secret_key,
    SVC_DEPLOYMENT_KEY: deployment.key,
  };
  const child = spawn(command, args, { stdio: 'inherit', env });
  // Stopped from outside: stop the command, then the mocks and the server below.
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  status = await new Promise((done) => {
    child.on('error', (error) => {
      console.error(`${command}: ${error.message}`);
      done(127);
    });
    child.on('exit', (code, signal) => done(code ?? (signal ? 1 : 0)));
  });
} finally {
  await mocks.stop();
  await server?.close();
  rmSync(workDir, { recursive: true, force: true });
}
process.exit(status);
