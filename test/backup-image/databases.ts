// Throwaway databases on the MariaDB and PostgreSQL servers of the development machine, made and
// read through their own command-line clients so the backup script is checked against real servers.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { TestContext } from 'node:test';

export const MARIADB = { host: '127.0.0.1', port: 3306, user: 'root' } as const;
export const POSTGRES = { host: '127.0.0.1', port: 5432, user: 'postgres' } as const;

/** A database with one table `items` whose `label` column holds the returned labels. */
export interface Fixture {
  readonly database: string;
  readonly labels: readonly string[];
}

export function uniqueName(prefix: string): string {
  return `${prefix}_${randomBytes(5).toString('hex')}`;
}

/** Fails the calling test, naming the Debian package to install, when a client is missing. */
export function requireTool(tool: string, debianPackage: string): void {
  const found = spawnSync('sh', ['-c', 'command -v "$1"', 'sh', tool]).status === 0;
  assert.ok(
    found,
    `${tool} is not installed on this machine: install the Debian package ${debianPackage}`,
  );
}

function runClient(what: string, command: string, args: string[], input?: string): string {
  const result = spawnSync(command, args, { encoding: 'utf8', input, timeout: 30_000 });
  if (result.error) throw new Error(`${what}: ${result.error.message}`);
  if (result.status !== 0) {
    throw new Error(`${what} failed (exit ${result.status}): ${result.stderr.trim()}`);
  }
  return result.stdout;
}

/** Runs SQL as MariaDB's root over TCP; without `sql`, runs `input` as a script (a restore). */
function mariadb(sql: string | null, database = '', input?: string): string {
  const args = [
    '--protocol=TCP',
    `--host=${MARIADB.host}`,
    `--port=${MARIADB.port}`,
    `--user=${MARIADB.user}`,
    '--batch',
    '--skip-column-names',
    ...(sql === null ? [] : [`--execute=${sql}`]),
    ...(database ? [database] : []),
  ];
  return runClient(`MariaDB at ${MARIADB.host}:${MARIADB.port}`, 'mariadb', args, input);
}

/** Runs SQL as PostgreSQL's `postgres` user; without `sql`, runs `input` as a script (a restore). */
function psql(sql: string | null, database = 'test', input?: string): string {
  const args = [
    `--host=${POSTGRES.host}`,
    `--port=${POSTGRES.port}`,
    `--username=${POSTGRES.user}`,
    `--dbname=${database}`,
    '--no-psqlrc',
    '--quiet',
    '--tuples-only',
    '--no-align',
    '--set=ON_ERROR_STOP=1',
    ...(sql === null ? [] : [`--command=${sql}`]),
  ];
  return runClient(`PostgreSQL at ${POSTGRES.host}:${POSTGRES.port}`, 'psql', args, input);
}

function labelsFor(database: string): string[] {
  return [1, 2, 3].map((n) => `${database}-row-${n}`);
}

function insertSql(labels: readonly string[]): string {
  const values = labels.map((label, i) => `(${i + 1}, '${label}')`).join(', ');
  return `CREATE TABLE items (id INT PRIMARY KEY, label VARCHAR(100) NOT NULL); INSERT INTO items VALUES ${values};`;
}

function lines(output: string): string[] {
  return output.split('\n').filter((line) => line !== '');
}

/**
 * A MariaDB database with rows and a user that may dump it, whose password the backup script gets
 * from the credentials dir; both are dropped when the test ends.
 */
export function mariadbFixture(t: TestContext): Fixture & { user: string; password: string } {
  const database = uniqueName('bj');
  const user = uniqueName('bj_user');
  const password = `pw-${randomBytes(8).toString('hex')}-'"$`;
  const labels = labelsFor(database);
  const quoted = password.replaceAll('\\', '\\\\').replaceAll("'", "\\'");
  t.after(() => {
    mariadb(`DROP DATABASE IF EXISTS \`${database}\`; DROP USER IF EXISTS '${user}'@'127.0.0.1'`);
  });
  mariadb(
    `CREATE DATABASE \`${database}\`; CREATE USER '${user}'@'127.0.0.1' IDENTIFIED BY '${quoted}';` +
      ` GRANT SELECT, SHOW VIEW, TRIGGER, LOCK TABLES ON \`${database}\`.* TO '${user}'@'127.0.0.1'`,
  );
  mariadb(insertSql(labels), database);
  return { database, labels, user, password };
}

/** A PostgreSQL database with rows, dropped when the test ends. */
export function postgresFixture(t: TestContext): Fixture {
  const database = uniqueName('bj');
  const labels = labelsFor(database);
  t.after(() => {
    psql(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  });
  psql(`CREATE DATABASE ${database}`);
  psql(insertSql(labels), database);
  return { database, labels };
}

/** Loads a dump into a fresh MariaDB database and returns the labels it holds. */
export function restoreIntoMariadb(sql: string): string[] {
  const database = uniqueName('bj_restore');
  mariadb(`CREATE DATABASE \`${database}\``);
  try {
    mariadb(null, database, sql);
    return lines(mariadb('SELECT label FROM items ORDER BY id', database));
  } finally {
    mariadb(`DROP DATABASE IF EXISTS \`${database}\``);
  }
}

/** Loads a dump into a fresh PostgreSQL database and returns the labels it holds. */
export function restoreIntoPostgres(sql: string): string[] {
  const database = uniqueName('bj_restore');
  psql(`CREATE DATABASE ${database}`);
  try {
    psql(null, database, sql);
    return lines(psql('SELECT label FROM items ORDER BY id', database));
  } finally {
    psql(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  }
}
