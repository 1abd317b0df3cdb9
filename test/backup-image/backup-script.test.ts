// The reference backup image's script against the real MariaDB and PostgreSQL servers of the
// development machine: dumps that restore, retention, cleanup, and one clear line per failure.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { freePort } from '#testing';
import {
  MARIADB,
  POSTGRES,
  mariadbFixture,
  postgresFixture,
  requireTool,
  restoreIntoMariadb,
  restoreIntoPostgres,
  uniqueName,
} from './databases.js';
import {
  UNPRIVILEGED,
  assertFailure,
  backupOk,
  daysAgo,
  filesIn,
  runBackupScript,
  utcStamp,
  workspace,
  writeCredentials,
  type Workspace,
} from './harness.js';

const BACKUP_FILE = /^(mysql|mariadb|postgres)-(\d{8}T\d{6}Z)\.sql\.gz$/;

function requireMariadbClients(): void {
  requireTool('mariadb', 'mariadb-client');
  requireTool('mariadb-dump', 'mariadb-client');
}

function requirePostgresClients(): void {
  requireTool('psql', 'postgresql-client');
  requireTool('pg_dump', 'postgresql-client');
}

/** Checks the written file is this run's only one, correctly named, gzip, and returns its SQL. */
function readBackup(ws: Workspace, engine: string, ok: { file: string; bytes: number }): string {
  assert.equal(join(ws.destination, basename(ok.file)), ok.file);
  assert.deepEqual(filesIn(ws.destination), [basename(ok.file)], 'no partial file is left behind');
  const match = BACKUP_FILE.exec(basename(ok.file));
  assert.ok(match, `file name ${basename(ok.file)} does not follow <engine>-<stamp>.sql.gz`);
  assert.equal(match[1], engine);
  const written = new Date(
    (match[2] ?? '').replace(
      /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/,
      '$1-$2-$3T$4:$5:$6Z',
    ),
  );
  assert.ok(
    Math.abs(written.getTime() - Date.now()) < 3_600_000,
    'the stamp is the UTC time of the run',
  );
  const bytes = readFileSync(ok.file);
  assert.equal(ok.bytes, bytes.length);
  assert.deepEqual([...bytes.subarray(0, 2)], [0x1f, 0x8b], 'gzip magic number');
  return gunzipSync(bytes).toString('utf8');
}

describe('backup image script: dumps', () => {
  test('mariadb with a bare engine target and full credentials dumps rows that restore, without printing the password', (t) => {
    requireMariadbClients();
    const ws = workspace(t);
    const db = mariadbFixture(t);
    const { host, port } = MARIADB;
    writeCredentials(ws.credentials, {
      host,
      port,
      database: db.database,
      username: db.user,
      password: db.password,
    });

    const result = runBackupScript(ws, { BACKUP_TARGET: 'mariadb', BACKUP_RETENTION_DAYS: '7' });

    const ok = backupOk(result);
    assert.equal(ok.pruned, 0);
    const sql = readBackup(ws, 'mariadb', ok);
    assert.deepEqual(restoreIntoMariadb(sql), db.labels);
    assert.ok(!result.stdout.includes(db.password) && !result.stderr.includes(db.password));
    assert.match(result.stdout, /ops\/mysql-daily/, 'logs name the BackupJob');
  });

  test('mysql target names its files mysql-<stamp>.sql.gz', (t) => {
    requireMariadbClients();
    const ws = workspace(t);
    const db = mariadbFixture(t);
    writeCredentials(ws.credentials, { username: db.user, password: db.password });

    const result = runBackupScript(ws, {
      BACKUP_TARGET: `mysql://${MARIADB.host}:${MARIADB.port}/${db.database}`,
    });

    const sql = readBackup(ws, 'mysql', backupOk(result));
    for (const label of db.labels) assert.ok(sql.includes(label), `dump holds ${label}`);
  });

  test('postgresql URL target dumps rows that restore, into postgres-<stamp>.sql.gz', (t) => {
    requirePostgresClients();
    const ws = workspace(t);
    const db = postgresFixture(t);
    const password = `never-printed-${uniqueName('pw')}`;
    writeCredentials(ws.credentials, { username: POSTGRES.user, password });

    const result = runBackupScript(ws, {
      BACKUP_TARGET: `postgresql://${POSTGRES.host}:${POSTGRES.port}/${db.database}`,
      BACKUP_RETENTION_DAYS: '3',
    });

    const sql = readBackup(ws, 'postgres', backupOk(result));
    assert.deepEqual(restoreIntoPostgres(sql), db.labels);
    assert.ok(!result.stdout.includes(password) && !result.stderr.includes(password));
  });

  test('credentials keys override the host, port and database of the URL', async (t) => {
    requirePostgresClients();
    const ws = workspace(t);
    const db = postgresFixture(t);
    const { host, port, user } = POSTGRES;
    writeCredentials(ws.credentials, { host, port, database: db.database, username: user });

    const result = runBackupScript(ws, {
      // A port nothing listens on: the run succeeds only if the credentials' port wins.
      BACKUP_TARGET: `postgres://unreachable.invalid:${await freePort()}/not_this_one`,
    });

    const sql = readBackup(ws, 'postgres', backupOk(result));
    for (const label of db.labels) assert.ok(sql.includes(label), `dump holds ${label}`);
  });
});

describe('backup image script: retention and cleanup', () => {
  test('retention prunes backups whose name stamp is older than BACKUP_RETENTION_DAYS and keeps everything else', (t) => {
    requirePostgresClients();
    const ws = workspace(t);
    const db = postgresFixture(t);
    writeCredentials(ws.credentials, { username: POSTGRES.user });
    mkdirSync(ws.destination, { recursive: true });
    const expired = [
      `postgres-${utcStamp(daysAgo(10))}.sql.gz`,
      // The destination belongs to one BackupJob: backups of an engine it used before age out too.
      `mariadb-${utcStamp(daysAgo(30))}.sql.gz`,
    ];
    const leftoverPartial = `.postgres-${utcStamp(daysAgo(10))}.sql.gz.partial.Ab12Cd`;
    const recent = `postgres-${utcStamp(daysAgo(6))}.sql.gz`;
    const foreign = [
      'notes.txt',
      'postgres-latest.sql.gz',
      'postgres-20000101T000000Z.sql.gz.bak',
      'mysql-20000101T000000Z.sql',
      'oracle-20000101T000000Z.sql.gz',
      `.postgres-${utcStamp(daysAgo(0.5))}.sql.gz.partial.Zz99Yy`,
    ];
    for (const name of [...expired, leftoverPartial, recent, ...foreign]) {
      writeFileSync(join(ws.destination, name), 'old\n');
    }
    // Age is read from the name, not the modification time, which copies of a volume reset.
    const longAgo = daysAgo(60);
    for (const name of [recent, ...foreign])
      utimesSync(join(ws.destination, name), longAgo, longAgo);
    // Named once: a second name computed later could fall in the next second.
    const directory = `postgres-${utcStamp(daysAgo(40))}.sql.gz`;
    mkdirSync(join(ws.destination, directory));

    const result = runBackupScript(ws, {
      BACKUP_TARGET: `postgres://${POSTGRES.host}/${db.database}`,
      BACKUP_RETENTION_DAYS: '7',
    });

    const ok = backupOk(result);
    assert.equal(ok.pruned, expired.length);
    const kept = [basename(ok.file), recent, ...foreign, directory].sort();
    assert.deepEqual(filesIn(ws.destination), kept);
  });

  test('a retention of one day keeps the backup just written', (t) => {
    requirePostgresClients();
    const ws = workspace(t);
    const db = postgresFixture(t);
    writeCredentials(ws.credentials, { username: POSTGRES.user });

    const result = runBackupScript(ws, {
      BACKUP_TARGET: `postgres://${POSTGRES.host}/${db.database}`,
      BACKUP_RETENTION_DAYS: '1',
    });

    const ok = backupOk(result);
    assert.equal(ok.pruned, 0);
    assert.ok(statSync(ok.file).size > 0);
  });

  test('cleanup mode removes every backup of the BackupJob, keeps other files, and is idempotent', (t) => {
    const ws = workspace(t);
    mkdirSync(ws.destination, { recursive: true });
    const backups = [
      `postgres-${utcStamp(new Date())}.sql.gz`,
      `postgres-${utcStamp(daysAgo(3))}.sql.gz`,
      `mysql-${utcStamp(daysAgo(400))}.sql.gz`,
    ];
    const partial = `.postgres-${utcStamp(new Date())}.sql.gz.partial.Qw34Er`;
    const foreign = ['README', 'postgres-latest.sql.gz', 'mariadb-20260101T000000Z.sql.gz.sha256'];
    for (const name of [...backups, partial, ...foreign]) {
      writeFileSync(join(ws.destination, name), 'x\n');
    }

    const first = runBackupScript(ws, { BACKUP_MODE: 'cleanup', BACKUP_TARGET: 'postgres' });
    const second = runBackupScript(ws, { BACKUP_MODE: 'cleanup', BACKUP_TARGET: 'postgres' });

    assert.equal(first.status, 0, first.stderr);
    assert.match(first.stdout, /^cleanup ok: dir=\S+ removed=3$/m);
    assert.deepEqual(filesIn(ws.destination), [...foreign].sort());
    assert.equal(second.status, 0, second.stderr);
    assert.match(second.stdout, /^cleanup ok: dir=\S+ removed=0$/m);
  });

  test('cleanup mode succeeds when nothing was ever stored', (t) => {
    const ws = workspace(t);

    const result = runBackupScript(ws, { BACKUP_MODE: 'cleanup' });

    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /^cleanup ok: dir=\S+ removed=0/m);
    assert.deepEqual(filesIn(ws.destination), []);
  });
});

describe('backup image script: failures say what went wrong in one line', () => {
  const configErrors: { name: string; env: Record<string, string>; reason: RegExp }[] = [
    { name: 'missing BACKUP_TARGET', env: {}, reason: /BACKUP_TARGET is not set/ },
    {
      name: 'unknown engine',
      env: { BACKUP_TARGET: 'oracle://127.0.0.1:1521/app' },
      reason: /unknown engine 'oracle'/,
    },
    {
      name: 'credentials inside the target URL',
      env: { BACKUP_TARGET: 'oracle://admin:hunter2@127.0.0.1/app' },
      reason: /credentials Secret/,
    },
    {
      name: 'retention that is not a whole number of days',
      env: { BACKUP_TARGET: 'postgres://127.0.0.1/app', BACKUP_RETENTION_DAYS: '0' },
      reason: /BACKUP_RETENTION_DAYS '0'/,
    },
    {
      name: 'unknown mode',
      env: { BACKUP_TARGET: 'postgres://127.0.0.1/app', BACKUP_MODE: 'restore' },
      reason: /BACKUP_MODE 'restore'/,
    },
    {
      name: 'no host anywhere',
      env: { BACKUP_TARGET: 'mysql' },
      reason: /no database host/,
    },
    {
      name: 'no destination',
      env: { BACKUP_TARGET: 'postgres://127.0.0.1/app', BACKUP_DESTINATION: '' },
      reason: /BACKUP_DESTINATION is not set/,
    },
  ];
  for (const { name, env, reason } of configErrors) {
    test(`bad configuration: ${name}`, (t) => {
      const ws = workspace(t);
      writeCredentials(ws.credentials, { username: 'backup' });

      const result = runBackupScript(ws, env);

      assertFailure(result, 2, reason);
      assert.ok(!result.stderr.includes('hunter2'), 'the password is never printed');
      assert.deepEqual(filesIn(ws.destination), []);
    });
  }

  test('unreachable server: a closed local port', async (t) => {
    requirePostgresClients();
    const ws = workspace(t);
    writeCredentials(ws.credentials, { username: POSTGRES.user });
    const port = await freePort(); // free, so closed: connections are refused

    const result = runBackupScript(ws, { BACKUP_TARGET: `postgres://127.0.0.1:${port}/app` });

    assertFailure(
      result,
      1,
      new RegExp(
        `cannot connect to postgres server at 127\\.0\\.0\\.1:${port}: Connection refused`,
      ),
    );
    assert.deepEqual(filesIn(ws.destination), [], 'no partial backup is left');
  });

  test('dump failure: the database does not exist, and no partial file is left', (t) => {
    requirePostgresClients();
    const ws = workspace(t);
    const missing = uniqueName('bj_missing');
    writeCredentials(ws.credentials, { username: POSTGRES.user });

    const result = runBackupScript(ws, { BACKUP_TARGET: `postgres://${POSTGRES.host}/${missing}` });

    assertFailure(
      result,
      1,
      new RegExp(`dump of postgres database '${missing}' .* failed: .*does not exist`),
    );
    assert.deepEqual(filesIn(ws.destination), []);
  });

  test('dump failure on mariadb: access denied for a wrong password', (t) => {
    requireMariadbClients();
    const ws = workspace(t);
    const db = mariadbFixture(t);
    writeCredentials(ws.credentials, { username: db.user, password: 'wrong-password' });

    const result = runBackupScript(ws, {
      BACKUP_TARGET: `mariadb://${MARIADB.host}/${db.database}`,
    });

    assertFailure(result, 1, /dump of mariadb database .* failed: .*Access denied/);
    assert.ok(!result.stderr.includes('wrong-password'));
    assert.deepEqual(filesIn(ws.destination), []);
  });

  test('destination not writable by the (non-root) backup user', (t: TestContext) => {
    requirePostgresClients();
    const ws = workspace(t);
    writeCredentials(ws.credentials, { username: POSTGRES.user });
    mkdirSync(ws.destination, { recursive: true, mode: 0o755 });
    chmodSync(ws.destination, 0o555);
    // Root writes anywhere; the image runs as a non-root user, so the test does too when it is root.
    const asUid = process.getuid?.() === 0 ? UNPRIVILEGED : undefined;

    const result = runBackupScript(
      ws,
      { BACKUP_TARGET: `postgres://${POSTGRES.host}/test` },
      { asUid },
    );

    assertFailure(result, 1, /destination \S+ is not writable by uid \d+/);
    assert.deepEqual(filesIn(ws.destination), []);
  });
});
