import { runQueueBench } from '../queue/main.js';
import type { Scenario } from './context.js';

/** The queue library's own benchmark: keys/s and Redis cost per key next to raw BullMQ. */
export const queueFloorScenario: Scenario = {
  name: 'queue-floor',
  title: 'Queue floor: the key queue against raw BullMQ add+process',
  run: (ctx) => runQueueBench({ quick: ctx.size.queueFloor.quick, log: ctx.log }),
};
