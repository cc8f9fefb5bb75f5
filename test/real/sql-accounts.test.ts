/**
 * The SQL accounts side task (reconcile/sql-accounts.ts) against a real MySQL-protocol server:
 * Debian's MariaDB (10.11), started in TiDB's initial state, root's password then set as the
 * initializer sets it. Kubernetes is in memory (the Secrets, the status ConfigMap), and the pass is
 * driven by hand; every log line, Event and status written is kept and searched for the passwords.
 *
 * It runs on MariaDB, so it leaves out what only TiDB has: `RESOURCE GROUP`, roles named with a
 * host (MariaDB's `CREATE ROLE` takes a name alone, and its `SHOW GRANTS` names roles without one)
 * and `SET DEFAULT ROLE ALL`. Those statements and TiDB's `SHOW GRANTS` format are covered by the
 * unit tests (test/unit/controller/plan/, test/unit/controller/clients/).
 */
import { KubeError } from '../../src/controller/clients/kube-errors';
import type { ClusterInfo } from '../../src/controller/model/cluster';
import type { Pod } from '../../src/controller/model/objects';
import type { PassView } from '../../src/controller/reconcile/observe';
import { SqlAccountsKeeper } from '../../src/controller/reconcile/sql-accounts';
import { statusDocument } from '../../src/controller/reconcile/status';
import { StatusRecords } from '../../src/controller/records/store';
import { Logger } from '../../src/controller/runtime/log';
import type { SqlAccountInfo, SqlAccountsInfo } from '../../src/tidbcluster/contract/sql-accounts';
import { login as loginTo, startMariaDb, type MariaDb } from '../support/mariadb';
import { MARIADB, requires } from '../support/requires';

jest.setTimeout(120_000);

const ROOT = "r00t'pass\\word";
const APP_1 = 'app-Secret-1';
const APP_2 = "app-Secret-2'rotated";
const REPORT = 'report-Secret-3';
const PASSWORDS = [ROOT, APP_1, APP_2, REPORT];

/** Kubernetes in memory: Secrets by name (with a version), and the status ConfigMap. */
class FakeKube {
  readonly secrets = new Map<string, { rv: number; data: Record<string, string> }>();
  readonly configMaps = new Map<string, Record<string, string>>();
  readonly written: string[] = [];
  private rv = 1;

  setSecret(name: string, data: Record<string, string>): void {
    this.secrets.set(name, { rv: this.rv++, data });
  }
  path(_group: string, resource: string, name?: string): string {
    return `${resource}/${name ?? ''}`;
  }
  async send<T>(_verb: string, _method: string, path: string): Promise<T> {
    const [resource, name] = path.split('/');
    const s = resource === 'secrets' ? this.secrets.get(name) : undefined;
    if (!s) throw new KubeError(`${path} not found`, 404);
    const data = Object.fromEntries(Object.entries(s.data).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
    return { metadata: { uid: `uid-${name}`, resourceVersion: String(s.rv) }, data } as T;
  }
  async getConfigMapData(name: string) {
    return this.configMaps.get(name);
  }
  async applyConfigMap(name: string, _labels: unknown, data: Record<string, string>) {
    this.configMaps.set(name, data);
    this.written.push(JSON.stringify(data));
  }
}

const mariadb = requires(MARIADB);

mariadb.describe('SQL accounts kept from Git, against MariaDB', () => {
  let db: MariaDb;
  beforeAll(async () => {
    db = await startMariaDb();
    await db.sql(`ALTER USER 'root'@'%' IDENTIFIED BY '${ROOT.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`);
    await db.sql('CREATE DATABASE app; CREATE TABLE app.orders (id INT)');
  });
  afterAll(async () => {
    await db?.stop();
  });

  const login = (user: string, password: string) => loginTo(db, user, password);
  const grants = async (who: string) =>
    (await db.sql(`SHOW GRANTS FOR ${who}`))
      .trim()
      .split('\n')
      .filter((l) => !l.startsWith('GRANT USAGE'));

  test('creates, rotates, revokes, reports and corrects drift, drops with Delete and keeps with Retain; no password said anywhere', async () => {
    const kube = new FakeKube();
    const logs: string[] = [];
    const events: string[] = [];
    const reader: SqlAccountInfo = {
      kind: 'SqlRole',
      document: 'reader',
      user: 'reader',
      host: '%',
      grants: [{ privileges: ['SELECT'], database: 'app' }],
      deletionPolicy: 'Delete',
    };
    const app: SqlAccountInfo = {
      kind: 'SqlUser',
      document: 'app',
      user: 'app',
      host: '%',
      password: { secret: 'app-passwords', key: 'app' },
      roles: [{ user: 'reader', host: '%' }],
      grants: [{ privileges: ['INSERT', 'UPDATE'], database: 'app', table: 'orders' }],
    };
    const report: SqlAccountInfo = {
      kind: 'SqlUser',
      document: 'report',
      user: 'report',
      host: '%',
      password: { secret: 'app-passwords', key: 'report' },
      grants: [{ privileges: ['SELECT'], database: 'app' }],
      deletionPolicy: 'Delete',
    };
    const cluster = {
      name: 'c',
      namespace: 'ns',
      sql: undefined as SqlAccountsInfo | undefined,
      initializer: { name: 'init', passwordSecret: 'tidb-secret' },
    };
    const declare = (...accounts: SqlAccountInfo[]) => (cluster.sql = { loginSecret: 'tidb-secret', accounts });
    const pod = { metadata: { name: 'c-tidb-0' }, status: { conditions: [{ type: 'Ready', status: 'True' }] } } as unknown as Pod;

    /** A controller (a restart makes a new one, reading its records back), and one pass of it. */
    const controller = () => {
      const records = new StatusRecords(kube, 'c');
      const keeper = new SqlAccountsKeeper(
        {
          cluster: cluster as unknown as ClusterInfo,
          kube,
          log: new Logger('debug', {}, (line) => logs.push(line)),
          event: async (name, type, reason, message) => {
            events.push(JSON.stringify({ name, type, reason, message }));
          },
          sqlAddress: () => ({ host: db.host, port: db.port }),
        },
        records,
      );
      const status = () =>
        JSON.parse(statusDocument('c', [], [], undefined, records, undefined, undefined, undefined, undefined, [], keeper.current()));
      const pass = async () => {
        await records.restore();
        records.composeWith(() => JSON.stringify(status()));
        await keeper.run({ view: {} as PassView, notReady: undefined, tidbPods: [pod], logBackups: () => undefined });
        await records.write(JSON.stringify(status()));
        return status();
      };
      return { pass };
    };
    let c = controller();
    const reasons = () => events.map((e) => JSON.parse(e).reason as string);

    // Waiting: for the initializer, then for root's Secret, then (report alone) for its key.
    declare(reader, app, report);
    let s = await c.pass();
    expect(s.sqlAccounts.waiting).toBe('the initializer init is not started: the accounts wait until it is Complete');
    kube.configMaps.set('c-status', { 'status.json': JSON.stringify({ initializer: { name: 'init', phase: 'Complete' } }) });
    c = controller();
    s = await c.pass();
    expect(s.sqlAccounts.waiting).toBe("the Secret tidb-secret with root's password (key root) is not there");
    kube.setSecret('tidb-secret', { root: ROOT });
    kube.setSecret('app-passwords', { app: `${APP_1}\n` });
    s = await c.pass();
    expect(s.sqlAccounts.accounts[2]).toMatchObject({ state: 'waiting', reason: 'the Secret app-passwords has no key report' });
    expect(await login('app', APP_1)).toBe('ok');

    // Created: a role with its grant, two users with theirs and the role; an unmanaged user left alone.
    await db.sql("CREATE USER 'bob'@'%' IDENTIFIED BY 'bob-pass'");
    kube.setSecret('app-passwords', { app: `${APP_1}\n`, report: REPORT });
    s = await c.pass();
    expect(s.sqlAccounts.accounts.map((a: { account: string; state: string }) => [a.account, a.state])).toEqual([
      ["'reader'@'%'", 'ok'],
      ["'app'@'%'", 'ok'],
      ["'report'@'%'", 'ok'],
    ]);
    expect(s.sqlAccounts.unmanaged).toEqual(["'bob'@'%'", "'harness'@'localhost'"]);
    // app's password is set again: the Secret's version changed when report's key came.
    expect(reasons()).toEqual(['SqlAccountCreated', 'SqlAccountCreated', 'SqlAccountChanged', 'SqlAccountCreated']);
    expect(await login('app', APP_1)).toBe('ok');
    expect(await login('report', REPORT)).toBe('ok');
    expect(await grants('`reader`')).toEqual(['GRANT SELECT ON `app`.* TO `reader`']);
    expect(await grants("'app'@'%'")).toEqual(['GRANT `reader` TO `app`@`%`', 'GRANT INSERT, UPDATE ON `app`.`orders` TO `app`@`%`']);
    expect(s.sqlAccountRecords["'app'@'%'"]).toMatchObject({
      kind: 'SqlUser',
      deletionPolicy: 'Retain',
      secretVersion: 'uid-app-passwords/3',
    });

    // A restart finds its records: nothing is done again.
    c = controller();
    s = await c.pass();
    expect(reasons()).toHaveLength(4);
    expect(await login('bob', 'bob-pass')).toBe('ok');

    // The password rotated: the Secret changed, the old password no longer logs in, the new one does.
    kube.setSecret('app-passwords', { app: APP_2, report: REPORT });
    s = await c.pass();
    expect(await login('app', APP_1)).toBe('denied');
    expect(await login('app', APP_2)).toBe('ok');
    expect(await login('report', REPORT)).toBe('ok');

    // A grant revoked in Git.
    const app2: SqlAccountInfo = { ...app, grants: [{ privileges: ['INSERT'], database: 'app', table: 'orders' }] };
    declare(reader, app2, report);
    s = await c.pass();
    expect(await grants("'app'@'%'")).toEqual(['GRANT `reader` TO `app`@`%`', 'GRANT INSERT ON `app`.`orders` TO `app`@`%`']);

    // A grant added by hand: reported, left; then undone with drift: correct.
    await db.sql("GRANT DELETE ON app.* TO 'app'@'%'");
    s = await c.pass();
    expect(s.sqlAccounts.accounts[1]).toMatchObject({ account: "'app'@'%'", state: 'drift', drift: ['DELETE ON `app`.* granted by hand'] });
    expect(reasons().filter((r) => r === 'SqlAccountDrift')).toHaveLength(1);
    expect(await grants("'app'@'%'")).toContain('GRANT DELETE ON `app`.* TO `app`@`%`');
    declare(reader, { ...app2, drift: 'correct' }, report);
    s = await c.pass();
    expect(await grants("'app'@'%'")).toEqual(['GRANT `reader` TO `app`@`%`', 'GRANT INSERT ON `app`.`orders` TO `app`@`%`']);
    expect(s.sqlAccounts.accounts[1].state).toBe('ok');

    // The documents leave Git: report (Delete) is dropped, app (Retain) kept, bob never touched.
    declare(reader);
    s = await c.pass();
    expect(await login('report', REPORT)).toBe('denied');
    expect((await db.sql("SELECT COUNT(*) FROM mysql.user WHERE User = 'report'")).trim()).toBe('0');
    expect(await login('app', APP_2)).toBe('ok');
    expect(s.sqlAccounts.kept).toEqual(["'app'@'%'"]);
    expect(s.sqlAccountRecords["'app'@'%'"].retained).toBe(true);
    expect(reasons()).toContain('SqlAccountDropped');
    expect(await login('bob', 'bob-pass')).toBe('ok');
    s = await c.pass();
    expect(await login('app', APP_2)).toBe('ok');

    // The last document leaves Git (the cluster JSON has no `sql` any more): the role, Delete, is dropped
    // all the same, logged in to as the initializer does.
    cluster.sql = undefined;
    s = await c.pass();
    expect((await db.sql("SELECT COUNT(*) FROM mysql.user WHERE User = 'reader'")).trim()).toBe('0');
    expect(s.sqlAccounts).toEqual({ accounts: [], unmanaged: ["'bob'@'%'", "'harness'@'localhost'"], kept: ["'app'@'%'"] });
    expect(await login('app', APP_2)).toBe('ok');

    // Nothing said anywhere holds a password.
    const said = [...logs, ...events, ...kube.written].join('\n');
    expect(said).toContain('SqlAccountCreated');
    for (const p of PASSWORDS) expect(said).not.toContain(p);
    expect(said).not.toMatch(/app-Secret|report-Secret|r00t/);
  });
});
