/**
 * ResourceGroup documents end to end, on the real API server (v1.32, test/kube/), the controller bundle
 * logging in as root to the TiDB SQL simulator (test/sim/tidb-sql.ts) of TiDB v8.5.1, listening at the
 * TiDB Pod's address and port 4000: no real TiDB runs here, and MariaDB has no resource groups. The
 * documents are read and rendered as `render` does; a change in Git is the controller started again
 * with the new rendering (its Deployment's environment), as a rollout does. The groups are created with
 * the statements v8.5 takes, a lower ruPerSecond in Git is an ALTER, a change by hand is drift
 * (reported, then undone with `drift: correct`, turning BURSTABLE off with v8.5's `BURSTABLE = FALSE`),
 * a document that leaves Git with `Delete` is dropped and one with `Retain` kept, and a group made by
 * hand is listed as unmanaged and never touched. The API server refuses the controller nothing.
 * What differs per release (v7.1, v9.0) is in test/scenarios/controller/resource-groups.test.ts.
 */
import { realApiSuite } from '../kube/suite';
import { RealWorld } from '../kube/world';
import { type ControllerProcess, simCluster } from '../sim/controller-process';
import { TidbSqlSim } from '../sim/tidb-sql';
import { renderAccounts } from '../support/sql-accounts';

type Obj = Record<string, any>;

const suite = realApiSuite();
const { describeReal } = suite;

jest.setTimeout(240_000);

const ROOT_PASSWORD = 'r00t-Login-1';
const namespace = 'rg-1';

let world: RealWorld | undefined;
let sim: TidbSqlSim | undefined;

afterEach(async () => {
  const w = world;
  const s = sim;
  world = undefined;
  sim = undefined;
  try {
    if (w) expect(w.forbidden()).toEqual([]);
  } finally {
    await w?.close();
    await s?.stop();
  }
});

/** The documents Git holds now; the render reads them at each call. */
let documents: Obj[] = [];

function render(cluster: Obj): Obj[] {
  return renderAccounts([cluster, ...documents], '1.32');
}

const group = (name: string, spec: Obj): Obj => ({
  apiVersion: 'tidb-gitops.io/v1alpha1',
  kind: 'ResourceGroup',
  metadata: { name, namespace },
  spec: { cluster: { name: 'c' }, ...spec },
});

const OLTP_LIMIT = { execElapsed: '60s', action: 'KILL', watch: { type: 'SIMILAR', duration: '10m' } };
const OLTP_RULE = "QUERY_LIMIT = (EXEC_ELAPSED = '1m0s', ACTION = KILL, WATCH = SIMILAR DURATION = '10m0s')";

describeReal('resource groups on the real API server, against the TiDB v8.5.1 SQL simulator', () => {
  test('created, altered, drift reported then corrected, dropped (Delete), kept (Retain); a hand-made one untouched', async () => {
    const oltp = (spec: Obj = {}) =>
      group('oltp', { ruPerSecond: 2000, priority: 'HIGH', queryLimit: OLTP_LIMIT, deletionPolicy: 'Delete', ...spec });
    const batch = group('batch', { ruPerSecond: 1000, burstable: true });
    documents = [oltp(), batch];
    const cluster = simCluster({ version: 'v8.5.1', tidb: { replicas: 1, initializer: { createPassword: true } } }, { namespace });
    const w = await RealWorld.start({ cp: suite.cp(), cluster, render });
    world = w;
    const pod = async () => w.kube.get(`/api/v1/namespaces/${namespace}/pods/c-tidb-0`);
    await w.waitFor(async () => (await pod())?.status?.podIP !== undefined, 60_000, 'the TiDB Pod to get its address');
    const s = new TidbSqlSim({ version: 'v8.5.1', rootPassword: ROOT_PASSWORD, host: (await pod())!.status.podIP, port: 4000 });
    sim = s;
    expect(await s.start()).toBe(4000);
    // Made by hand before the controller ever ran: never the controller's.
    s.createByHand('adhoc', 'RU_PER_SEC = 100');
    await w.kube.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'c-init', namespace }, stringData: { root: ROOT_PASSWORD } });
    let controller: ControllerProcess = await w.startController(['--resync', '1s']);

    /** The resource-group statements the server took, in order. */
    const changes = () => s.statements.filter((q) => /^(CREATE|ALTER|DROP) RESOURCE GROUP/i.test(q));
    const rg = async (): Promise<Obj> => (await w.status())?.resourceGroups ?? {};
    const states = async () => Object.fromEntries(((await rg()).groups ?? []).map((g: Obj) => [g.document, g.state]));
    const until = async (want: Obj, what: string) =>
      w.waitFor(async () => JSON.stringify(await states()) === JSON.stringify(want), 90_000, what);
    /** Git changes: the controller is started again with the new rendering. */
    const gitNow = async (docs: Obj[]) => {
      documents = docs;
      await w.applyCluster(cluster);
      controller.kill('SIGKILL');
      await controller.exited;
      controller = await w.startController(['--resync', '1s']);
    };

    // 1. Both created, with every option Git declares, in v8.5's grammar.
    await until({ batch: 'ok', oltp: 'ok' }, 'both groups to be ok');
    expect(changes()).toEqual([
      'CREATE RESOURCE GROUP IF NOT EXISTS `batch` RU_PER_SEC = 1000, PRIORITY = MEDIUM, BURSTABLE',
      `CREATE RESOURCE GROUP IF NOT EXISTS \`oltp\` RU_PER_SEC = 2000, PRIORITY = HIGH, ${OLTP_RULE}`,
    ]);
    expect(s.statements).toContain('SELECT NAME, RU_PER_SEC, PRIORITY, BURSTABLE, QUERY_LIMIT FROM information_schema.resource_groups');
    expect(s.groups().map((g) => [g.name, g.ruPerSec, g.priority, g.burstable, g.queryLimit])).toEqual([
      ['adhoc', '100', 'MEDIUM', 'NO', null],
      ['batch', '1000', 'MEDIUM', 'YES', null],
      ['default', 'UNLIMITED', 'MEDIUM', 'YES', null],
      ['oltp', '2000', 'HIGH', 'NO', "EXEC_ELAPSED='1m0s', ACTION=KILL, WATCH=SIMILAR DURATION='10m0s'"],
    ]);
    expect((await rg()).unmanaged).toEqual(['adhoc']);
    expect((await rg()).kept).toEqual([]);
    expect((await w.status())?.resourceGroupRecords).toEqual({
      batch: { document: 'batch', deletionPolicy: 'Retain', applied: { ruPerSecond: 1000, burstable: true } },
      oltp: {
        document: 'oltp',
        deletionPolicy: 'Delete',
        applied: {
          ruPerSecond: 2000,
          priority: 'HIGH',
          queryLimit: { execElapsedMs: 60_000, action: 'KILL', watch: { type: 'SIMILAR', durationMs: 600_000 } },
        },
      },
    });
    const created = await w.events('ResourceGroupCreated');
    expect(created.map((e) => [e.involvedObject.kind, e.involvedObject.name, e.message]).sort()).toEqual([
      ['StatefulSet', 'c-tidb', 'resource group batch: created'],
      ['StatefulSet', 'c-tidb', 'resource group oltp: created'],
    ]);

    // 2. Git lowers oltp's ruPerSecond: one ALTER naming every option Git declares.
    await gitNow([oltp({ ruPerSecond: 1500 }), batch]);
    const alter = `ALTER RESOURCE GROUP \`oltp\` RU_PER_SEC = 1500, PRIORITY = HIGH, ${OLTP_RULE}`;
    await w.waitFor(() => changes().includes(alter), 90_000, 'the ALTER of oltp');
    await w.waitFor(async () => s.groups().find((g) => g.name === 'oltp')?.ruPerSec === '1500', 30_000, 'oltp at 1500 RU');
    await until({ batch: 'ok', oltp: 'ok' }, 'both groups to be ok again');
    expect(changes()).toHaveLength(3);
    expect((await w.events('ResourceGroupChanged')).map((e) => e.message)).toEqual(['resource group oltp: changed']);

    // 3. A change by hand: drift, reported (state, Event), and not undone.
    s.alterByHand('oltp', 'RU_PER_SEC = 3000, BURSTABLE');
    await until({ batch: 'ok', oltp: 'drift' }, 'oltp to be reported as drift');
    const drifted = ((await rg()).groups as Obj[]).find((g) => g.document === 'oltp');
    expect(drifted).toEqual({
      document: 'oltp',
      group: 'oltp',
      state: 'drift',
      drift: ['RU_PER_SEC is 3000, not 1500', 'it is BURSTABLE'],
    });
    await w.waitFor(async () => (await w.events('ResourceGroupDrift')).length > 0, 30_000, 'the ResourceGroupDrift Event');
    const drift = await w.events('ResourceGroupDrift');
    expect(drift.map((e) => [e.type, e.involvedObject.name, e.message])).toEqual([
      ['Warning', 'c-tidb', 'resource group oltp was changed by hand: RU_PER_SEC is 3000, not 1500; it is BURSTABLE'],
    ]);
    expect(changes()).toHaveLength(3);
    expect(s.groups().find((g) => g.name === 'oltp')).toMatchObject({ ruPerSec: '3000', burstable: 'YES' });

    // 4. With drift: correct, undone: v8.5 turns BURSTABLE off with BURSTABLE = FALSE.
    await gitNow([oltp({ ruPerSecond: 1500, drift: 'correct' }), batch]);
    const correct = `ALTER RESOURCE GROUP \`oltp\` RU_PER_SEC = 1500, PRIORITY = HIGH, BURSTABLE = FALSE, ${OLTP_RULE}`;
    await w.waitFor(() => changes().includes(correct), 90_000, 'the ALTER that undoes the drift');
    await until({ batch: 'ok', oltp: 'ok' }, 'oltp to be ok once corrected');
    expect(s.groups().find((g) => g.name === 'oltp')).toMatchObject({ ruPerSec: '1500', burstable: 'NO' });
    expect(changes()).toHaveLength(4);

    // 5. oltp leaves Git (deletionPolicy Delete): dropped.
    await gitNow([batch]);
    await w.waitFor(() => changes().includes('DROP RESOURCE GROUP IF EXISTS `oltp`'), 90_000, 'the DROP of oltp');
    await until({ batch: 'ok' }, 'only batch to be declared');
    expect(s.groups().map((g) => g.name)).toEqual(['adhoc', 'batch', 'default']);
    expect((await w.events('ResourceGroupDropped')).map((e) => e.message)).toEqual(['resource group oltp: dropped']);
    await w.waitFor(async () => (await w.status())?.resourceGroupRecords?.oltp === undefined, 30_000, 'the record of oltp to go');

    // 6. batch leaves Git (Retain): kept on the server, listed as kept, no longer changed.
    await gitNow([]);
    await w.waitFor(async () => JSON.stringify((await rg()).kept) === '["batch"]', 90_000, 'batch to be listed as kept');
    expect(await rg()).toEqual({ groups: [], unmanaged: ['adhoc'], kept: ['batch'] });
    await w.waitFor(async () => (await w.status())?.resourceGroupRecords?.batch?.retained === true, 30_000, 'batch recorded as retained');
    s.alterByHand('batch', 'RU_PER_SEC = 10');
    const passes = s.statements.length;
    await w.waitFor(() => s.statements.length >= passes + 3, 30_000, 'three more reads of the groups');
    expect(s.groups().map((g) => [g.name, g.ruPerSec])).toEqual([
      ['adhoc', '100'],
      ['batch', '10'],
      ['default', 'UNLIMITED'],
    ]);

    // Everything the controller ran: no statement ever named the hand-made group.
    expect(changes()).toHaveLength(5);
    expect(changes().filter((q) => q.includes('adhoc'))).toEqual([]);
    expect(await w.events('ResourceGroupFailed')).toEqual([]);
    const said = [w.controllerOutput(), JSON.stringify(await w.status()), JSON.stringify(await w.events())].join('\n');
    expect(said).not.toContain(ROOT_PASSWORD);
  });
});
