import { connect, createServer, type Socket } from 'node:net';

/** A TCP relay between clients and one server whose client-to-server direction can be held. */
export interface TcpProxy {
  readonly port: number;
  /** What clients sent since hold(), held back, in order. */
  held(): Buffer;
  /**
   * From the first chunk a client sends that `from` accepts (any, by default), what clients send
   * is kept back, as on a congested or partitioned link: the chosen request is the first held.
   */
  hold(from?: (chunk: Buffer) => boolean): void;
  /** Sends what was held, then relays again. */
  release(): void;
  stop(): Promise<void>;
}

/**
 * Relays every connection to `target` on loopback. Holding delays a client's requests without
 * closing anything, so they reach the server late, in order and unchanged: how a write issued
 * before a fault can land after it.
 */
export async function startTcpProxy(
  targetPort: number,
  targetHost = '127.0.0.1',
): Promise<TcpProxy> {
  const pairs = new Set<{ client: Socket; server: Socket; held: Buffer[] }>();
  let holding = false;
  let holdFrom: ((chunk: Buffer) => boolean) | undefined;
  const proxy = createServer((client) => {
    const server = connect(targetPort, targetHost);
    const pair = { client, server, held: [] as Buffer[] };
    pairs.add(pair);
    client.on('data', (chunk: Buffer) => {
      if (!holding && holdFrom?.(chunk)) holding = true;
      if (holding) pair.held.push(chunk);
      else server.write(chunk);
    });
    server.pipe(client);
    const close = () => {
      pairs.delete(pair);
      client.destroy();
      server.destroy();
    };
    client.on('close', close).on('error', close);
    server.on('close', close).on('error', close);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const address = proxy.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no TCP port');
  return {
    port: address.port,
    held() {
      return Buffer.concat([...pairs].flatMap((pair) => pair.held));
    },
    hold(from = () => true) {
      holdFrom = from;
    },
    release() {
      holding = false;
      holdFrom = undefined;
      for (const pair of pairs) {
        for (const chunk of pair.held) pair.server.write(chunk);
        pair.held = [];
      }
    },
    async stop() {
      for (const pair of pairs) {
        pair.client.destroy();
        pair.server.destroy();
      }
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}
