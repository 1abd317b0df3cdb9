import type { Socket } from 'node:net';
import { Cluster, type Redis } from 'ioredis';

/**
 * Sends the commands a connection is given within one turn of the event loop in one write.
 * ioredis writes each command to its socket as it is issued, one system call and one packet
 * each; a key, its snapshot and its mark are a handful of commands issued together, and a burst
 * issues thousands. Corking the socket at the first write of a turn and uncorking it once the
 * turn's callbacks and promise jobs have run lets Node flush them with one writev: the same bytes,
 * in the same order, on the same connection. ioredis' own auto-pipelining gathers them too, but
 * builds a Pipeline for each batch, whose cost ate the gain (docs/performance.md).
 */
export function corkEachTurn<C extends Redis | Cluster>(client: C): C {
  if (client instanceof Cluster) {
    for (const node of client.nodes()) corkNode(node);
    client.on('+node', corkNode);
  } else {
    corkNode(client as Redis);
  }
  return client;
}

const wrapped = new WeakSet<Socket>();

/** Each reconnect brings a new socket, wrapped as it connects. */
function corkNode(node: Redis): void {
  const wrapCurrent = () => {
    const socket = node.stream as Socket | undefined;
    if (socket && !wrapped.has(socket)) wrap(socket);
  };
  wrapCurrent();
  node.on('connect', wrapCurrent);
}

function wrap(socket: Socket): void {
  wrapped.add(socket);
  const write = socket.write;
  let corked = false;
  const flush = () => {
    corked = false;
    socket.uncork();
  };
  socket.write = function (this: Socket, ...args: Parameters<Socket['write']>) {
    if (!corked) {
      corked = true;
      socket.cork();
      process.nextTick(flush);
    }
    return write.apply(this, args);
  } as Socket['write'];
}
