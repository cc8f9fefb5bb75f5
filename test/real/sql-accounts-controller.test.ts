/**
 * SqlUser and SqlRole documents end to end, on the real API server (v1.32, test/kube/) against a real
 * MySQL-protocol server: Debian's MariaDB, at the TiDB Pod's address and port. The documents are read
 * and rendered as `render` reads and renders them; the controller bundle, with the rendered Role's
 * token, reads the login and password Secrets, creates the accounts, sets a rotated password, and
 * is never refused by the API server (the audit log says so). No password reaches a log, the status
 * or an Event. What only TiDB has (roles named with a host, RESOURCE GROUP) is left out here, as
 * test/real/sql-accounts.test.ts says.
 */
import { realApiSuite } from '../kube/suite';
import { RealWorld } from '../kube/world';
import { simCluster } from '../sim/controller-process';
import { login, startMariaDb, type MariaDb } from '../support/mariadb';
import { renderAccounts } from '../support/sql-accounts';

type Obj = Record<string, any>;

const suite = realApiSuite();
const { describeReal } = suite;

jest.setTimeout(180_000);

const ROOT_PASSWORD = 'r00t-Login-1';
const APP_PASSWORD = 'app-First-2';
const APP_ROTATED = 'app-Rotated-3';

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

/** Renders the cluster with the documents beside it through the one input pipeline, as `render` does. */
function renderWithAccounts(...documents: Obj[]) {
  return (cluster: Obj): Obj[] => renderAccounts([cluster, ...documents], '1.32');
}

describeReal('SQL accounts on the real API server, against MariaDB', () => {
  test('the rendered Role lets the controller read the Secrets; accounts are created, a rotation lands; no password is said', async () => {
    const namespace = 'sql-1';
    const doc = (kind: string, name: string, spec: Obj) => ({
      apiVersion: 'tidb-gitops.io/v1alpha1',
      kind,
      metadata: { name, namespace },
      spec: { cluster: { name: 'c' }, ...spec },
    });
    const reader = doc('SqlRole', 'reader', { grants: [{ privileges: ['SELECT'], level: 'app.*' }] });
    const app = doc('SqlUser', 'app', {
      passwordSecret: { name: 'app-password', key: 'password' },
      roles: [{ name: 'reader' }],
      grants: [{ privileges: ['INSERT', 'UPDATE'], level: 'app.*' }],
      deletionPolicy: 'Delete',
    });
    const w = await RealWorld.start({
      cp: suite.cp(),
      cluster: simCluster({ tidb: { replicas: 1, initializer: { createPassword: true } } }, { namespace }),
      render: renderWithAccounts(reader, app),
    });
    world = w;
    const pod = async () => w.kube.get(`/api/v1/namespaces/${namespace}/pods/c-tidb-0`);
    await w.waitFor(async () => (await pod())?.status?.podIP !== undefined, 60_000, 'the TiDB Pod to get its address');
    const d = await startMariaDb({ host: (await pod())!.status.podIP, port: 4000 });
    db = d;
    await w.kube.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'c-init', namespace }, stringData: { root: ROOT_PASSWORD } });
    await w.kube.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'app-password', namespace },
      stringData: { password: APP_PASSWORD },
    });
    await w.startController(['--resync', '1s']);

    const status = async (): Promise<Obj> =>
      JSON.parse((await w.kube.get(`/api/v1/namespaces/${namespace}/configmaps/c-status`))?.data?.['status.json'] ?? '{}');
    const states = async () =>
      Object.fromEntries(((await status()).sqlAccounts?.accounts ?? []).map((a: Obj) => [a.document, a.state]) as [string, string][]);
    await w.waitFor(
      async () => JSON.stringify(await states()) === JSON.stringify({ reader: 'ok', app: 'ok' }),
      90_000,
      'both accounts to be ok',
    );
    expect(await login(d, 'app', APP_PASSWORD)).toBe('ok');
    const grants = await d.sql("SHOW GRANTS FOR 'app'@'%'");
    expect(grants).toMatch(/GRANT INSERT, UPDATE ON `app`\.\* TO `app`@`%`/);
    expect(grants).toMatch(/GRANT `reader` TO `app`@`%`/);
    expect(await d.sql('SHOW GRANTS FOR reader')).toMatch(/GRANT SELECT ON `app`\.\* TO `reader`/);

    // A rotation: the Secret changes, the password follows without the account being re-created.
    await w.kube.patch(`/api/v1/namespaces/${namespace}/secrets/app-password`, 'merge', { stringData: { password: APP_ROTATED } });
    await w.waitFor(async () => (await login(d, 'app', APP_ROTATED)) === 'ok', 60_000, 'the rotated password to log in');
    expect(await login(d, 'app', APP_PASSWORD)).toBe('denied');
    expect(await d.sql("SHOW GRANTS FOR 'app'@'%'")).toMatch(/GRANT `reader` TO `app`@`%`/);

    const created = await w.events('SqlAccountCreated');
    expect(created.length).toBeGreaterThanOrEqual(2);
    const said = [
      w.controllerOutput(),
      JSON.stringify(await status()),
      JSON.stringify(await w.kube.list(`/api/v1/namespaces/${namespace}/events`)),
    ].join('\n');
    for (const p of [ROOT_PASSWORD, APP_PASSWORD, APP_ROTATED]) expect(said).not.toContain(p);
  });
});
