/** What `process.memoryUsage()` says inside a process, read right after a full garbage collection. */
export interface MemoryAfterGc {
  readonly rss: number;
  readonly heapUsed: number;
  readonly heapTotal: number;
  readonly external: number;
}

interface Reply {
  readonly id: number;
  readonly result?: { readonly result?: { readonly value?: unknown } };
  readonly error?: { readonly message: string };
}

/**
 * Asks a process started with `--inspect=127.0.0.1:<port>` to collect its garbage (the DevTools
 * protocol's HeapProfiler.collectGarbage: a full, compacting GC) and then reads its memory, so a
 * figure is what the process keeps, not what it has yet to free.
 */
export async function memoryAfterGc(port: number): Promise<MemoryAfterGc> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  const url = targets[0]?.webSocketDebuggerUrl;
  if (!url) throw new Error(`no inspector target on port ${port}`);
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener('open', () => resolve(), { once: true });
    ws.addEventListener('error', () => reject(new Error(`inspector on ${port} refused`)), {
      once: true,
    });
  });
  let next = 0;
  const call = (method: string, params?: unknown) =>
    new Promise<Reply>((resolve) => {
      const id = ++next;
      const onMessage = (event: MessageEvent) => {
        const reply = JSON.parse(String(event.data)) as Reply;
        if (reply.id !== id) return;
        ws.removeEventListener('message', onMessage);
        resolve(reply);
      };
      ws.addEventListener('message', onMessage);
      ws.send(JSON.stringify({ id, method, params }));
    });
  try {
    // Twice: objects freed by the first collection's finalizers go in the second.
    for (let i = 0; i < 2; i += 1) await call('HeapProfiler.collectGarbage');
    const reply = await call('Runtime.evaluate', {
      expression: 'JSON.stringify(process.memoryUsage())',
      returnByValue: true,
    });
    if (reply.error) throw new Error(reply.error.message);
    return JSON.parse(String(reply.result?.result?.value)) as MemoryAfterGc;
  } finally {
    ws.close();
  }
}
