import type { Worker } from 'bullmq';
import type { RedisClient } from './connection.js';

/** The client name BullMQ gives a worker of this queue that is named `name`. */
export function workerClientName(worker: Worker, name: string): string {
  // clientName is BullMQ's own naming, protected on the class; the format is what getWorkers reads.
  return (worker as unknown as { clientName(suffix: string): string }).clientName(`:w:${name}`);
}

/**
 * Names a connection the way BullMQ names a worker's (`<prefix>:<base64 queue name>:w:<name>`),
 * so that Queue.getWorkers, which reads CLIENT LIST, finds the consumer serving that shard. The
 * consumer fetches jobs itself on one shared connection, so without this no shard would list a
 * worker. The name is set again after every reconnect; on a Redis Cluster it lands on one node,
 * which is the one getWorkers' per-node answer counts.
 */
export function nameAsWorker(client: RedisClient, name: string): void {
  const setName = () => {
    client.client('SETNAME', name).catch(() => undefined);
  };
  client.on('ready', setName);
  if (client.status === 'ready') setName();
}
