// Runs the reference server the way a user does (`svc-server start` on a fresh data
// directory) and reads the demo project's keys from what it prints. Its engine runs at the
// tests' priority (--engine-nice 0): on CI's 2 cores, busy with other tests, an idle engine waits.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export interface RunningServer {
  url: string;
  apiKey: string;
  secretKey: string;
  deploymentKey: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

const serverBin = () => join(dirname(createRequire(import.meta.url).resolve('@svc/server/package.json')), 'bin/svc-server.mjs');

export async function startServer(): Promise<RunningServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-fuzz-'));
  const child = spawn(process.execPath, ['--max-semi-space-size=16', serverBin(), 'start', '--data-dir', dataDir, '--port', '0', '--engine-nice', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => process.stderr.write(chunk));
  const printed = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server printed no keys in 60 s:\n${output}`)), 60_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (/deployment .*: \S+/.test(output) && /secret key:/.test(output)) {
        clearTimeout(timer);
        resolve(output);
      }
    });
    child.once('exit', (code) => reject(new Error(`the server exited with ${code}:\n${output}`)));
  });
  const field = (pattern: RegExp) => pattern.exec(printed)![1]!;
  return {
    url: field(/ingest\s+(http:\/\/\S+)/),
    apiKey: field(/API key:\s+(\S+)/),
    secretKey: field(/secret key:\s+(\S+)/),
    deploymentKey: field(/deployment [^:]+: (\S+)/),
    child,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
