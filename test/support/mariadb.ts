/**
 * A real MySQL-protocol server for the tests: Debian's MariaDB (`mariadb-server`), bootstrapped in a
 * temporary directory and started on loopback (or the address given) in TiDB's initial state:
 * `root@%` with no password and every privilege (pingcap/tidb `pkg/session/bootstrap.go`), no other
 * root. The harness keeps its own way in for `sql()`, over the Unix socket only (a TCP client never
 * matches it), since tests change root's password. Optionally with TLS, from a CA and certificates
 * made with openssl.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { connectMysql, ER_ACCESS_DENIED, MysqlError } from '../../src/controller/clients/mysql';
import { freePort } from '../sim/ports';

const run = promisify(execFile);

const MARIADBD = '/usr/sbin/mariadbd';
const INSTALL_DB = '/usr/bin/mariadb-install-db';
const CLI = '/usr/bin/mariadb';
const HARNESS_USER = 'harness';
const HARNESS_PASSWORD = 'harness-only';
const READY_WITHIN_MS = 30_000;

/** PEM: the CA, the server's certificate and key (given to mariadbd), a client certificate and key. */
export interface MariaDbTls {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
  readonly clientCert: string;
  readonly clientKey: string;
}

export interface MariaDb {
  readonly host: string;
  readonly port: number;
  readonly dir: string;
  readonly tls?: MariaDbTls;
  /** Runs SQL through the `mariadb` CLI with every privilege, whatever root's password is; the output tab-separated, without headers. */
  sql(statement: string): Promise<string>;
  /** Kills the server and removes its directory. */
  stop(): Promise<void>;
}

/**
 * Root as TiDB leaves it, one statement per line (MariaDB reads an init file line by line): only
 * `root@%`, no password. The harness's user is reachable over the socket alone.
 */
const INIT_SQL = [
  "CREATE USER IF NOT EXISTS 'root'@'%';",
  "GRANT ALL ON *.* TO 'root'@'%' WITH GRANT OPTION;",
  "DELETE FROM mysql.global_priv WHERE User='root' AND Host <> '%';",
  `CREATE USER '${HARNESS_USER}'@'localhost' IDENTIFIED BY '${HARNESS_PASSWORD}';`,
  `GRANT ALL ON *.* TO '${HARNESS_USER}'@'localhost' WITH GRANT OPTION;`,
  'FLUSH PRIVILEGES;',
  '',
].join('\n');

/** Whether `user` logs in to `db` with `password` (any other failure is thrown). */
export async function login(db: Pick<MariaDb, 'host' | 'port'>, user: string, password: string): Promise<'ok' | 'denied'> {
  try {
    await (await connectMysql({ host: db.host, port: db.port, user, password })).close();
    return 'ok';
  } catch (err) {
    if (err instanceof MysqlError && err.code === ER_ACCESS_DENIED) return 'denied';
    throw err;
  }
}

export async function startMariaDb(opts: { host?: string; port?: number; tls?: boolean } = {}): Promise<MariaDb> {
  if (![MARIADBD, INSTALL_DB, CLI].every((p) => existsSync(p)))
    throw new Error('mariadb-server (Debian) is needed: apt-get install mariadb-server');
  const host = opts.host ?? '127.0.0.1';
  const dir = mkdtempSync(join(tmpdir(), 'tidb-gitops-mariadb-'));
  const f = (name: string) => join(dir, name);
  const asRoot = process.getuid?.() === 0 ? ['--user=root'] : [];
  const remove = () => rmSync(dir, { recursive: true, force: true });
  let tls: MariaDbTls | undefined;
  let port: number;
  try {
    // Its own tmpdir: a server starting removes the temporary tables it finds there, another's too.
    mkdirSync(f('tmp'));
    await run(INSTALL_DB, [
      '--no-defaults',
      ...asRoot,
      `--datadir=${f('data')}`,
      `--tmpdir=${f('tmp')}`,
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
    ]);
    writeFileSync(f('init.sql'), INIT_SQL);
    if (opts.tls) tls = await makeCertificates(dir);
    port = opts.port ?? (await freePort(host));
  } catch (err) {
    remove();
    throw err;
  }
  const child = spawn(
    MARIADBD,
    [
      '--no-defaults',
      ...asRoot,
      `--datadir=${f('data')}`,
      `--tmpdir=${f('tmp')}`,
      `--bind-address=${host}`,
      `--port=${port}`,
      `--socket=${f('sock')}`,
      '--skip-name-resolve',
      `--init-file=${f('init.sql')}`,
      `--pid-file=${f('pid')}`,
      `--log-error=${f('error.log')}`,
      '--skip-log-bin',
      '--performance-schema=OFF',
      '--innodb-buffer-pool-size=16M',
      '--max-connections=50',
      ...(tls ? [`--ssl-ca=${f('ca.crt')}`, `--ssl-cert=${f('server.crt')}`, `--ssl-key=${f('server.key')}`] : []),
    ],
    { stdio: 'ignore' },
  );
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    const gone = () => {
      exited = true;
      resolve();
    };
    child.once('exit', gone);
    child.once('error', gone);
  });
  // Should a test never call stop(), the server neither keeps the process alive nor outlives it.
  child.unref();
  const killAtExit = () => child.kill('SIGKILL');
  process.once('exit', killAtExit);
  const stop = async () => {
    process.off('exit', killAtExit);
    if (!exited) child.kill('SIGKILL');
    await exit;
    remove();
  };

  const deadline = Date.now() + READY_WITHIN_MS;
  while (!(await greets(host, port))) {
    if (exited || Date.now() > deadline) {
      const log = existsSync(f('error.log')) ? readFileSync(f('error.log'), 'utf8').slice(-2000) : '';
      await stop();
      throw new Error(
        `MariaDB did not ${exited ? 'stay up' : `greet within ${READY_WITHIN_MS} ms`} on ${host}:${port}; its log ends:\n${log}`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    host,
    port,
    dir,
    ...(tls && { tls }),
    async sql(statement: string): Promise<string> {
      const args = ['--no-defaults', `--socket=${f('sock')}`, `--user=${HARNESS_USER}`, '--batch', '--skip-column-names', '-e', statement];
      return (await run(CLI, args, { env: { ...process.env, MYSQL_PWD: HARNESS_PASSWORD } })).stdout;
    },
    stop,
  };
}

/** Whether the server answers a TCP connection with a protocol-10 handshake (it accepts connections once the init file has run). */
function greets(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host, port });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(2_000, () => done(false));
    s.once('error', () => done(false));
    s.once('close', () => done(false));
    s.once('data', (b: Buffer) => done(b.length > 4 && b[4] === 10));
  });
}

/** A CA, and a server and a client certificate it signed (P-256 keys: quick to make), written to `dir`. */
export async function makeCertificates(dir: string): Promise<MariaDbTls> {
  const f = (name: string) => join(dir, name);
  const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await run('openssl', [
    'req',
    '-x509',
    ...key,
    '-days',
    '2',
    '-subj',
    '/CN=tidb-gitops test CA',
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.crt'),
  ]);
  writeFileSync(
    f('leaf.ext'),
    'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\n',
  );
  for (const who of ['server', 'client']) {
    await run('openssl', ['req', ...key, '-subj', `/CN=${who}`, '-keyout', f(`${who}.key`), '-out', f(`${who}.csr`)]);
    await run('openssl', [
      'x509',
      '-req',
      '-in',
      f(`${who}.csr`),
      '-CA',
      f('ca.crt'),
      '-CAkey',
      f('ca.key'),
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      f('leaf.ext'),
      '-out',
      f(`${who}.crt`),
    ]);
  }
  const pem = (name: string) => readFileSync(f(name), 'utf8');
  return {
    ca: pem('ca.crt'),
    cert: pem('server.crt'),
    key: pem('server.key'),
    clientCert: pem('client.crt'),
    clientKey: pem('client.key'),
  };
}
