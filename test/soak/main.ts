import { randomInt } from 'node:crypto';
import { parseSoakArgs, USAGE } from './options.js';
import { runSoak } from './soak.js';

let options;
try {
  options = parseSoakArgs(process.argv.slice(2), () => randomInt(1, 1_000_000));
} catch (err) {
  console.error(`${(err as Error).message}\n\n${USAGE}`);
  process.exit(2);
}
if (options.help) {
  console.log(USAGE);
  process.exit(0);
}
console.log(
  `soak: seed ${options.seed}, ${options.durationMs / 1000} s, faults ${options.faults.join(',')}, ` +
    `${options.backupJobs} BackupJobs, ${options.watchers} watchers, ${options.workers} workers, Redis ${options.redis}`,
);
try {
  const { faults, violations } = await runSoak(options, (line) => console.log(line));
  console.log(`seed ${options.seed}: ${faults} faults, ${violations.length} violations`);
  process.exit(violations.length === 0 ? 0 : 1);
} catch (err) {
  console.error(
    `seed ${options.seed}: the soak could not run: ${(err as Error).stack ?? String(err)}`,
  );
  process.exit(1);
}
