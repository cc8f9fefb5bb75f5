/**
 * The initializer on the real API server (v1.32, test/kube/) against a real MySQL-protocol server:
 * MariaDB (Debian's mariadb-server), started in TiDB's initial state (only `root@%`, no password) at
 * the TiDB Pod's address and port. The controller, with the rendered Role's token, reads the
 * password Secret and the SQL, sets root's password, creates the users and runs the SQL once; a
 * restart runs nothing again; a controller killed while the SQL runs leaves it Lost, never run twice;
 * `createPassword` leaves a root that has a password as it is. No password reaches a log, a record
 * or an Event. The audit log shows the controller was never refused.
 */
import { realApiSuite } from '../kube/suite';
import { RealWorld } from '../kube/world';
import { simCluster, type ControllerProcess } from '../sim/controller-process';
import { login, startMariaDb, type MariaDb } from '../support/mariadb';
import { renderWith } from '../support/companions';

type Obj = Record<string, any>;

const suite = realApiSuite();
const { describeReal } = suite;

jest.setTimeout(180_000);

const ROOT_PASSWORD = "r00t'pass\\word";
const APP_PASSWORD = 'app-Secret-9';

let world: RealWorld | undefined;
let db: MariaDb | undefined;

afterEach(async () => {
  const w = world;
  const d = db;
  world = undefined;
  db = undefined;
  try {
    if (w) expect(w.forbidden()).toEqual([]);
  } finally {
    await w?.close();
    await d?.stop();
  }
});

/** The cluster, running, and MariaDB listening where its one TiDB Pod's MySQL port is. */
async function start(namespace: string, spec: Obj, ...documents: Obj[]): Promise<{ w: RealWorld; d: MariaDb }> {
  const w = await RealWorld.start({
    cp: suite.cp(),
    cluster: simCluster({ tidb: { replicas: 1 }, ...spec }, { namespace }),
    render: renderWith(...documents),
  });
  world = w;
  const pod = async () => w.kube.get(`/api/v1/namespaces/${namespace}/pods/c-tidb-0`);
  await w.waitFor(async () => (await pod())?.status?.podIP !== undefined, 60_000, 'the TiDB Pod to get its address');
  const d = await startMariaDb({ host: (await pod())!.status.podIP, port: 4000 });
  db = d;
  return { w, d };
}

const initializerCm = (w: RealWorld, namespace: string) => w.kube.get(`/api/v1/namespaces/${namespace}/configmaps/c-tidb-initializer`);
const status = async (w: RealWorld, namespace: string): Promise<Obj> =>
  JSON.parse((await w.kube.get(`/api/v1/namespaces/${namespace}/configmaps/c-status`))?.data?.['status.json'] ?? '{}');
const phase = async (w: RealWorld, namespace: string) =>
  (await initializerCm(w, namespace))?.metadata.annotations?.['tidb-gitops.io/phase'];

/** Passes the controller made as leader (idle or busy), from its metrics. */
async function acted(c: ControllerProcess): Promise<number> {
  if (c.metricsPort === undefined) return 0;
  const { body } = await c.get('/metrics');
  return [...body.matchAll(/^tidb_gitops_reconciles_total\{result="(?:idle|busy)"\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
}

/** Everything a password could leak to: the controllers' logs, the status, the Events, the ConfigMap. */
async function everythingSaid(w: RealWorld, namespace: string): Promise<string> {
  const logs = w.controllerOutput();
  const events = await w.kube.list(`/api/v1/namespaces/${namespace}/events`);
  return [logs, JSON.stringify(await status(w, namespace)), JSON.stringify(events), JSON.stringify(await initializerCm(w, namespace))].join(
    '\n',
  );
}

describeReal('the initializer on the real API server, against MariaDB', () => {
  test("sets root's password, creates a user and runs the SQL once; a restart runs nothing again; no password is said anywhere", async () => {
    const namespace = 'init-1';
    const doc = {
      apiVersion: 'pingcap.com/v1alpha1',
      kind: 'TidbInitializer',
      metadata: { name: 'init', namespace },
      spec: {
        image: 'tnir/mysqlclient',
        cluster: { name: 'c' },
        passwordSecret: 'tidb-secret',
        timezone: '+08:00',
        initSql:
          "CREATE DATABASE app;\nCREATE TABLE app.runs (\n  id INT AUTO_INCREMENT PRIMARY KEY,\n  at VARCHAR(6)\n);\nINSERT INTO app.runs (at) VALUES (@@session.time_zone);\nGRANT SELECT ON app.* TO 'app'@'%';\n",
      },
    };
    const { w, d } = await start(namespace, {}, doc);
    // The Secret comes after the controller: it waits, and says for what.
    const first = await w.startController(['--resync', '1s']);
    // First for a TiDB Pod that serves (its readiness gate), then for the Secret.
    const secretWait =
      'waiting: the Secret tidb-secret is not there; create it with a key per user (root for root) and the password as its value';
    await w.waitFor(
      async () => (await initializerCm(w, namespace))?.metadata.annotations?.['tidb-gitops.io/message'] === secretWait,
      60_000,
      'the initializer to wait for its Secret',
    );
    expect(await phase(w, namespace)).toBe('Waiting');
    await w.kube.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'tidb-secret', namespace },
      stringData: { root: ROOT_PASSWORD, app: `${APP_PASSWORD}\n` },
    });
    await w.waitFor(async () => (await phase(w, namespace)) === 'Complete', 60_000, 'the initializer to complete');

    expect(await login(d, 'root', '')).toBe('denied');
    expect(await login(d, 'root', ROOT_PASSWORD)).toBe('ok');
    expect(await login(d, 'app', APP_PASSWORD)).toBe('ok');
    expect(await d.sql('SELECT at FROM app.runs')).toBe('+08:00\n');
    expect((await status(w, namespace)).initializer).toMatchObject({
      name: 'init',
      phase: 'Complete',
      root: 'set',
      users: ['app'],
      statements: 4,
    });
    const complete = await w.events('InitializerComplete');
    expect(complete.map((e) => [e.involvedObject.kind, e.involvedObject.name, e.message])).toEqual([
      ['ConfigMap', 'c-tidb-initializer', "complete: root's password set; users created: app; 4 SQL statements run"],
    ]);

    // A restart, and passes after it: nothing runs again.
    first.kill('SIGKILL');
    await first.exited;
    const second = await w.startController(['--resync', '1s']);
    await w.waitFor(async () => (await acted(second)) >= 3, 60_000, 'the restarted controller to make three passes as leader');
    // Run again, its CREATE DATABASE would have failed, and the row count grown.
    expect(await d.sql('SELECT COUNT(*) FROM app.runs')).toBe('1\n');
    expect(await phase(w, namespace)).toBe('Complete');
    expect(await w.events('InitializerComplete')).toHaveLength(1);
    expect(await w.events('InitializerFailed')).toHaveLength(0);
    expect(await everythingSaid(w, namespace)).not.toContain(ROOT_PASSWORD);
    expect(await everythingSaid(w, namespace)).not.toContain(APP_PASSWORD);
  });

  test('a controller killed while the SQL runs: the run is Lost, and what followed never runs', async () => {
    const namespace = 'init-2';
    const doc = {
      apiVersion: 'pingcap.com/v1alpha1',
      kind: 'TidbInitializer',
      metadata: { name: 'slow', namespace },
      spec: {
        image: 'x',
        cluster: { name: 'c' },
        initSql: 'CREATE DATABASE app;\nCREATE TABLE app.t (a INT);\nSELECT SLEEP(4);\nINSERT INTO app.t VALUES (1);\n',
      },
    };
    const { w, d } = await start(namespace, {}, doc);
    const first = await w.startController(['--resync', '1s']);
    await w.waitFor(async () => (await status(w, namespace)).initializer?.step === 'sql', 60_000, 'the SQL to start');
    await w.waitFor(
      async () => (await d.sql("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'app'")) === '1\n',
      30_000,
      'the table to be created',
    );
    first.kill('SIGKILL');
    await first.exited;
    await w.startController(['--resync', '1s']);
    await w.waitFor(async () => (await phase(w, namespace)) === 'Lost', 60_000, 'the run to be Lost');
    expect((await status(w, namespace)).initializer.error).toBe(
      'the controller stopped while the initial SQL ran; it is not run again: see in the database what ran, and finish by hand',
    );
    // Past the SLEEP and more: the INSERT never ran, and the CREATE did not run twice.
    await new Promise((r) => setTimeout(r, 5_000));
    expect(await d.sql('SELECT COUNT(*) FROM app.t')).toBe('0\n');
    expect((await w.events('InitializerLost')).map((e) => e.type)).toEqual(['Warning']);
  });

  test("a statement that fails is reported with the server's words, without the passwords they quote", async () => {
    const namespace = 'init-4';
    const literal = 'lit-Pass-77';
    const doc = {
      apiVersion: 'pingcap.com/v1alpha1',
      kind: 'TidbInitializer',
      metadata: { name: 'bad', namespace },
      spec: {
        image: 'x',
        cluster: { name: 'c' },
        passwordSecret: 'tidb-secret',
        // A typo the server answers by quoting the statement from it on: both passwords with it.
        initSql: `CREATE DATABASE app;\nCREATE USERR 'x'@'%' IDENTIFIED BY '${literal}', 'y'@'%' IDENTIFIED BY '${APP_PASSWORD}';\n`,
      },
    };
    const { w } = await start(namespace, {}, doc);
    await w.kube.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'tidb-secret', namespace },
      stringData: { root: ROOT_PASSWORD, app: APP_PASSWORD },
    });
    await w.startController(['--resync', '1s']);
    await w.waitFor(async () => (await phase(w, namespace)) === 'Failed', 60_000, 'the initializer to fail');
    const error: string = (await status(w, namespace)).initializer.error;
    expect(error).toMatch(
      /^statement 2 of 2 \(line 2 of the SQL\) failed: ERROR 1064 \(42000\): You have an error in your SQL syntax; .* near 'USERR 'x'@'%' IDENTIFIED BY '\*\*\*', 'y'@'%' IDENTIFIED BY '\*\*\*''/,
    );
    // What the controller said (the ConfigMap's data is the SQL from Git, the literal with it).
    const cm = await initializerCm(w, namespace);
    const said = [
      w.controllerOutput(),
      JSON.stringify(await status(w, namespace)),
      JSON.stringify(await w.kube.list(`/api/v1/namespaces/${namespace}/events`)),
      JSON.stringify(cm!.metadata),
    ].join('\n');
    expect(cm!.metadata.annotations['tidb-gitops.io/message']).toBe(`failed: ${error}`);
    for (const secret of [literal, APP_PASSWORD, ROOT_PASSWORD]) expect(said).not.toContain(secret);
    expect((await w.events('InitializerFailed')).map((e) => e.message)).toEqual([`failed: ${error}`]);
  });

  test('a cluster moved from tidb-operator, whose initializer ran there: its SQL does not run again, and Git is asked what to do', async () => {
    const namespace = 'init-5';
    const doc = {
      apiVersion: 'pingcap.com/v1alpha1',
      kind: 'TidbInitializer',
      metadata: { name: 'init', namespace },
      spec: {
        image: 'tnir/mysqlclient',
        cluster: { name: 'c' },
        passwordSecret: 'tidb-secret',
        initSql: 'CREATE DATABASE IF NOT EXISTS app;\nCREATE TABLE IF NOT EXISTS app.runs (id INT);\nINSERT INTO app.runs VALUES (1);\n',
      },
    };
    const { w, d } = await start(namespace, {}, doc);
    // What tidb-operator's initializer left: root's password, and the SQL's database with its row.
    await d.sql(
      "CREATE DATABASE app; CREATE TABLE app.runs (id INT); INSERT INTO app.runs VALUES (1); ALTER USER 'root'@'%' IDENTIFIED BY 'r00t'",
    );
    await w.kube.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'tidb-secret', namespace }, stringData: { root: 'r00t' } });
    const c = await w.startController(['--resync', '1s']);
    await w.waitFor(async () => (await phase(w, namespace)) === 'Waiting', 60_000, 'the initializer to wait for an answer');
    await w.waitFor(async () => (await acted(c)) >= 3, 60_000, 'three passes as leader');
    expect(await phase(w, namespace)).toBe('Waiting');
    expect((await initializerCm(w, namespace))!.metadata.annotations['tidb-gitops.io/message']).toBe(
      'waiting: the cluster holds databases (app), and there is no record that this initializer ran: its SQL is not run on a guess. If it ran before (in tidb-operator), set the annotation tidb-gitops.io/existing-cluster: skip on the TidbInitializer; to run it in this cluster as it is, set tidb-gitops.io/existing-cluster: run',
    );
    // Run again, the INSERT would have added a row.
    expect(await d.sql('SELECT COUNT(*) FROM app.runs')).toBe('1\n');
    // Said once (besides the wait for a TiDB Pod that serves, before).
    expect((await w.events('InitializerWaiting')).filter((e) => e.message !== 'waiting: no TiDB Pod is ready')).toHaveLength(1);
  });

  test('createPassword: sets the password from <cluster>-init while root has none, and leaves a root that has one as it is', async () => {
    const namespace = 'init-3';
    const { w, d } = await start(namespace, { tidb: { replicas: 1, initializer: { createPassword: true } } });
    await w.kube.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'c-init', namespace }, stringData: { root: ROOT_PASSWORD } });
    // Root got a password before the controller came: it is left as it is.
    await d.sql("ALTER USER 'root'@'%' IDENTIFIED BY 'someone-else'");
    await w.startController(['--resync', '1s']);
    await w.waitFor(async () => (await phase(w, namespace)) === 'Complete', 60_000, 'the initializer to complete');
    expect((await status(w, namespace)).initializer).toMatchObject({ name: 'create-password', phase: 'Complete', root: 'kept' });
    expect(await login(d, 'root', 'someone-else')).toBe('ok');
    expect(await login(d, 'root', ROOT_PASSWORD)).toBe('denied');
    expect(await everythingSaid(w, namespace)).not.toContain(ROOT_PASSWORD);
  });
});
