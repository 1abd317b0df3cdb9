import { createServer } from 'node:net';

/**
 * Ports are picked below Linux's default ephemeral range (32768–60999), where the kernel never
 * hands one to an outgoing connection or to a `listen(0)`: between this probe and the moment the
 * caller's child process binds the port (a second or more for a Node process), nothing else in
 * this process can be given it, and the kernel cannot give it to anyone.
 */
const LOWEST = 20_000;
const SPAN = 12_000;
const handedOut = new Set<number>();
// Test files run in parallel processes: each starts its walk elsewhere in the range.
let next = LOWEST + ((process.pid * 7_919) % SPAN);

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A TCP port on loopback that is free now and that this process has not handed out before. */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < SPAN; tries++) {
    const port = next;
    next = LOWEST + ((next - LOWEST + 1) % SPAN);
    if (handedOut.has(port)) continue;
    if (await bindable(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free port between ${LOWEST} and ${LOWEST + SPAN - 1}`);
}
