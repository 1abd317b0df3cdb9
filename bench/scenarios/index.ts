import type { Scenario } from './context.js';
import { burstScenario } from './burst.js';
import { churnScenario } from './churn.js';
import { coalescingScenario } from './coalescing.js';
import { coldStartScenario, latencyBoundScenario, smallColdStartScenario } from './cold-start.js';
import { grantRecheckScenario } from './grant-recheck.js';
import { idleScenario } from './idle.js';
import { latencyScenario } from './latency.js';
import { memoryScenario } from './memory.js';
import { memoryLimitScenario } from './memory-limit.js';
import { ownWritesScenario } from './own-writes.js';
import { profileScenario } from './profile.js';
import { queueFloorScenario } from './queue-floor.js';
import { redisClusterScenario } from './redis-cluster.js';
import { redisMemoryScenario } from './redis-memory.js';
import { startUpScenario } from './start-up.js';
import { steadyScenario } from './steady.js';

/**
 * In running order: the cold start first (it finds the baseline's best concurrency the others
 * reuse), then the cheaper scenarios, so a run stopped early still has most of them. The last,
 * latency-bound, repeats the cold start's latency-bound runs alone; a full run skips it.
 */
export const SCENARIOS: readonly Scenario[] = [
  coldStartScenario,
  coalescingScenario,
  startUpScenario,
  smallColdStartScenario,
  burstScenario,
  queueFloorScenario,
  steadyScenario,
  grantRecheckScenario,
  churnScenario,
  ownWritesScenario,
  latencyScenario,
  idleScenario,
  memoryScenario,
  memoryLimitScenario,
  redisMemoryScenario,
  redisClusterScenario,
  profileScenario,
  latencyBoundScenario,
];
