// What the scripts that start private servers for tests share (ClickHouse, ZooKeeper): a free
// port on loopback, and a spawned server's lifetime tied to this process.

import { createServer } from 'node:net';

/** A port the kernel reports free on 127.0.0.1 (closed again before the server binds it). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Whether another process listens on `port` of 127.0.0.1 (a server that exited silently may have lost it to one). */
export function portTaken(port) {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.on('error', (error) => resolve(error.code === 'EADDRINUSE'));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(false)));
  });
}

/**
 * Watches a spawned server: if this process exits first, the server is killed with it;
 * `stop()` ends it (SIGTERM, SIGKILL after 10 s) once; `cleanUp` runs after either.
 * `exited()` is its exit (code, signal) once it has ended, null before.
 */
export function supervise(child, cleanUp) {
  let exited = null;
  const killOnExit = () => {
    child.kill('SIGKILL');
    cleanUp();
  };
  process.on('exit', killOnExit);
  const exit = new Promise((resolve) =>
    child.on('exit', (code, signal) => {
      process.off('exit', killOnExit);
      resolve((exited = { code, signal }));
    }),
  );
  let stopping;
  const stop = () =>
    (stopping ??= (async () => {
      if (!exited) {
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exit;
        clearTimeout(killer);
      }
      cleanUp();
    })());
  return { exit, exited: () => exited, stop };
}
