#!/usr/bin/env node
// Starts the Prism mocks of every host role, prints `role → url`, and stops them on
// SIGINT/SIGTERM. Ports: SVC_MOCK_BASE_PORT (default: ingest 4010, app 4011,
// experiment 4012, api 4013), SVC_MOCK_HOST (default 127.0.0.1), SVC_MOCK_VERBOSE=1 for
// Prism's request log.
import { startMocks } from '../src/index.mjs';

const basePort = process.env.SVC_MOCK_BASE_PORT ? Number(process.env.SVC_MOCK_BASE_PORT) : undefined;
let starting;
let stopping = false;

async function shutdown(signal) {
  if (stopping) return;
  stopping = true;
  console.log(`\n${signal}: stopping the mocks…`);
  // When the signal arrives during start-up, wait for it so that no Prism is left behind.
  const mocks = await starting?.catch(() => undefined);
  await mocks?.stop();
  process.exit(0);
}
process.on('SIGINT', () => shutdown('SIGINT'));
process.on('SIGTERM', () => shutdown('SIGTERM'));

try {
  starting = startMocks({
    host: process.env.SVC_MOCK_HOST || '127.0.0.1',
    basePort,
    verbose: process.env.SVC_MOCK_VERBOSE === '1',
  });
  await starting;
  if (!stopping) console.log('svc mocks are running; Ctrl-C to stop.');
} catch (error) {
  console.error(error.message);
  process.exit(1);
}
