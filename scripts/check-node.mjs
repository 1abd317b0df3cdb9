// Runs first in every npm entry point: on an unsupported Node the project fails in ways that do not
// name the cause (a compiler error, an undici stack trace), so this stops with one line instead.
// Plain JavaScript with no newer syntax, so that it runs on any Node old enough to be the problem.
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const range = pkg.engines.node;

function parse(version) {
  return version
    .replace(/^v/, '')
    .split('.')
    .map((n) => parseInt(n, 10) || 0);
}

function compare(a, b) {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

// The subset of semver ranges package.json uses: alternatives joined by "||", each a list of
// ">=x.y.z", "<x.y.z" or "^x.y.z" comparators that must all hold.
function satisfies(version, comparators) {
  return comparators.split(/\s+/).every((c) => {
    const m = /^(>=|<|\^)(.+)$/.exec(c);
    if (!m) throw new Error(`scripts/check-node.mjs cannot read engines.node "${range}"`);
    const bound = parse(m[2]);
    if (m[1] === '>=') return compare(version, bound) >= 0;
    if (m[1] === '<') return compare(version, bound) < 0;
    return version[0] === bound[0] && compare(version, bound) >= 0;
  });
}

const found = parse(process.versions.node);
if (!range.split('||').some((alt) => satisfies(found, alt.trim()))) {
  const recommended = readFileSync(new URL('../.nvmrc', import.meta.url), 'utf8').trim();
  console.error(
    `backupjob-operator needs Node.js ${range} but found v${process.versions.node} (${process.execPath}): ` +
      `install Node ${recommended} with "nvm install" (reads .nvmrc) or from https://nodejs.org and put it first on PATH`,
  );
  process.exit(1);
}
