/**
 * What differs per TiDB release in how the controller keeps resource groups: `ResourceGroupsKeeper`
 * driven pass by pass, logging in as root (its Secret served by a stand-in for the API server) to the
 * TiDB SQL simulator (test/sim/tidb-sql.ts) of each release on loopback, with the records kept in
 * memory. Servers: the simulator of TiDB v7.1.5 (no QUERY_LIMIT column, no way to turn BURSTABLE
 * off), v7.2.0 (a rule's watch needs a duration), v8.5.1 (`BURSTABLE = FALSE`; a statement refused,
 * a wrong root password) and v9.0.0 (the post-v8.5 line: `BURSTABLE = OFF`, a bare BURSTABLE shown as
 * MODERATED, the `default` group's as UNLIMITED); each test names its release. The whole story on the
 * real API server, with v8.5.1, is test/real/resource-groups-controller.test.ts.
 */
import type { ClusterInfo } from '../../../src/controller/model/cluster';
import type { Pod } from '../../../src/controller/model/objects';
import { ResourceGroupsKeeper, type ResourceGroupsStatus } from '../../../src/controller/reconcile/resource-groups';
import type { SidePass } from '../../../src/controller/reconcile/side-task';
import type { ResourceGroupRecord } from '../../../src/controller/records/resource-groups';
import type { StatusRecords } from '../../../src/controller/records/store';
import { Logger } from '../../../src/controller/runtime/log';
import type { ResourceGroupInfo } from '../../../src/tidbcluster/contract/resource-groups';
import { TidbSqlSim } from '../../sim/tidb-sql';

const PASSWORD = 'r00t-Pw-9';
const READ_V72 = 'SELECT NAME, RU_PER_SEC, PRIORITY, BURSTABLE, QUERY_LIMIT FROM information_schema.resource_groups';
const READ_V71 = 'SELECT NAME, RU_PER_SEC, PRIORITY, BURSTABLE FROM information_schema.resource_groups';

const sims: TidbSqlSim[] = [];
afterEach(async () => {
  await Promise.all(sims.splice(0).map((s) => s.stop()));
});

/** The records the status ConfigMap would hold, in memory. */
class MemoryRecords {
  resourceGroups: Record<string, ResourceGroupRecord> = {};
  readonly initializer = undefined;
  async setResourceGroup(name: string, record: ResourceGroupRecord | undefined): Promise<void> {
    const next = { ...this.resourceGroups };
    if (record) next[name] = record;
    else delete next[name];
    this.resourceGroups = next;
  }
}

interface Said {
  readonly type: string;
  readonly reason: string;
  readonly message: string;
}

const READY_POD = {
  metadata: { name: 'c-tidb-0' },
  status: { conditions: [{ type: 'Ready', status: 'True' }] },
} as unknown as Pod;

/**
 * A keeper for cluster `c` against the simulator of `version` (root's password `rootPassword`, the
 * Secret's `PASSWORD`); `declare` sets what Git declares before a pass.
 */
async function setUp(version: string, rootPassword = PASSWORD) {
  const sim = new TidbSqlSim({ version, rootPassword });
  sims.push(sim);
  const port = await sim.start();
  const records = new MemoryRecords();
  const events: Said[] = [];
  let groups: ResourceGroupInfo[] = [];
  const cluster = {
    name: 'c',
    namespace: 'ns',
    get sql() {
      return { loginSecret: 'c-init', accounts: [], ...(groups.length > 0 && { resourceGroups: groups }) };
    },
  } as unknown as ClusterInfo;
  const kube = {
    path: (_group: string, resource: string, name?: string) => `/api/v1/namespaces/ns/${resource}/${name ?? ''}`,
    send: async <T>(_verb: string, _method: string, path: string): Promise<T> => {
      if (path !== '/api/v1/namespaces/ns/secrets/c-init') throw new Error(`unexpected request for ${path}`);
      return { metadata: { uid: 'u', resourceVersion: '1' }, data: { root: Buffer.from(PASSWORD).toString('base64') } } as T;
    },
  };
  const keeper = new ResourceGroupsKeeper(
    {
      cluster,
      kube,
      sqlAddress: () => ({ host: '127.0.0.1', port }),
      statementTimeoutMs: 10_000,
      event: async (_name, type, reason, message) => void events.push({ type, reason, message }),
      log: new Logger('error'),
    },
    records as unknown as StatusRecords,
  );
  const pass = async (): Promise<ResourceGroupsStatus> => {
    await keeper.run({ tidbPods: [READY_POD] } as unknown as SidePass);
    return keeper.current()!;
  };
  const declare = (...g: ResourceGroupInfo[]) => void (groups = g);
  const changes = () => sim.statements.filter((q) => /^(CREATE|ALTER|DROP) RESOURCE GROUP/.test(q));
  return { sim, records, events, pass, declare, changes };
}

const states = (s: ResourceGroupsStatus) => s.groups.map((g) => [g.group, g.state]);

describe.each([
  { version: 'v7.2.0', watch: { type: 'SIMILAR', durationMs: 600_000 } as const, shown: "WATCH=SIMILAR DURATION='10m0s'" },
  { version: 'v8.5.1', watch: { type: 'PLAN' } as const, shown: 'WATCH=PLAN DURATION=UNLIMITED' },
  { version: 'v9.0.0', watch: { type: 'EXACT', durationMs: 5_400_000 } as const, shown: "WATCH=EXACT DURATION='1h30m0s'" },
])('TiDB $version (simulated): a runaway-query rule', ({ version, watch, shown }) => {
  test('is read back as it was written: the next passes run nothing and see no drift', async () => {
    const t = await setUp(version);
    // 1005 ms: TiDB shows 1.005s, which a sum of binary fractions reads as 1004.999… ms.
    t.declare({ document: 'oltp', name: 'oltp', ruPerSecond: 100, queryLimit: { execElapsedMs: 1005, action: 'COOLDOWN', watch } });
    await t.pass();
    expect(t.sim.groups().find((g) => g.name === 'oltp')?.queryLimit).toBe(`EXEC_ELAPSED='1.005s', ACTION=COOLDOWN, ${shown}`);
    expect(states(await t.pass())).toEqual([['oltp', 'ok']]);
    expect(states(await t.pass())).toEqual([['oltp', 'ok']]);
    expect(t.changes()).toHaveLength(1);
    expect(t.events.map((e) => e.reason)).toEqual(['ResourceGroupCreated']);
  });
});

describe('TiDB v7.1.5 (simulated)', () => {
  test('the groups are read without QUERY_LIMIT, which v7.1 has no column for', async () => {
    const t = await setUp('v7.1.5');
    t.declare({ document: 'batch', name: 'batch', ruPerSecond: 500, burstable: true });
    expect(states(await t.pass())).toEqual([['batch', 'ok']]);
    expect(t.sim.statements).toContain(READ_V71);
    expect(t.sim.statements.filter((q) => /QUERY_LIMIT/.test(q))).toEqual([]);
    expect(t.changes()).toEqual(['CREATE RESOURCE GROUP IF NOT EXISTS `batch` RU_PER_SEC = 500, PRIORITY = MEDIUM, BURSTABLE']);
    expect(t.sim.groups().find((g) => g.name === 'batch')).toMatchObject({ ruPerSec: '500', burstable: 'YES', queryLimit: null });
    // A lower quota: an ALTER v7.1 parses; BURSTABLE, already so, is left as it is (ALTER keeps what it does not name).
    t.declare({ document: 'batch', name: 'batch', ruPerSecond: 200, burstable: true });
    expect(states(await t.pass())).toEqual([['batch', 'ok']]);
    expect(t.changes()[1]).toBe('ALTER RESOURCE GROUP `batch` RU_PER_SEC = 200, PRIORITY = MEDIUM');
    expect(t.sim.groups().find((g) => g.name === 'batch')).toMatchObject({ ruPerSec: '200', burstable: 'YES' });
  });

  test('turning BURSTABLE off is refused with a reason, and nothing is run; said once', async () => {
    const t = await setUp('v7.1.5');
    t.declare({ document: 'batch', name: 'batch', ruPerSecond: 500, burstable: true });
    await t.pass();
    t.declare({ document: 'batch', name: 'batch', ruPerSecond: 500 });
    const status = await t.pass();
    expect(status.groups).toEqual([
      {
        document: 'batch',
        group: 'batch',
        state: 'refused',
        reason:
          'this TiDB release has no way to turn BURSTABLE off (TiDB v7.2 has BURSTABLE = FALSE): set burstable: true again, or drop the group by hand and let it be created anew',
      },
    ]);
    await t.pass();
    expect(t.changes()).toHaveLength(1);
    expect(t.sim.groups().find((g) => g.name === 'batch')?.burstable).toBe('YES');
    expect(t.events.filter((e) => e.reason === 'ResourceGroupFailed')).toEqual([
      { type: 'Warning', reason: 'ResourceGroupFailed', message: `resource group batch: ${status.groups[0].reason}` },
    ]);
    // The record still holds what last matched: setting burstable again is no change at all.
    expect(t.records.resourceGroups.batch.applied).toEqual({ ruPerSecond: 500, burstable: true });
  });
});

describe('TiDB v8.5.1 (simulated)', () => {
  test('BURSTABLE is turned off with BURSTABLE = FALSE', async () => {
    const t = await setUp('v8.5.1');
    t.declare({ document: 'batch', name: 'batch', ruPerSecond: 500, burstable: true });
    await t.pass();
    expect(t.sim.statements).toContain(READ_V72);
    t.declare({ document: 'batch', name: 'batch', ruPerSecond: 500 });
    expect(states(await t.pass())).toEqual([['batch', 'ok']]);
    expect(t.changes()[1]).toBe('ALTER RESOURCE GROUP `batch` RU_PER_SEC = 500, PRIORITY = MEDIUM, BURSTABLE = FALSE');
    expect(t.sim.groups().find((g) => g.name === 'batch')?.burstable).toBe('NO');
    expect(states(await t.pass())).toEqual([['batch', 'ok']]);
  });

  test('a drift undone by hand and done again is reported again', async () => {
    const t = await setUp('v8.5.1');
    t.declare({ document: 'oltp', name: 'oltp', ruPerSecond: 1000, priority: 'HIGH' });
    await t.pass();
    const drifts = () => t.events.filter((e) => e.reason === 'ResourceGroupDrift').map((e) => e.message);
    t.sim.alterByHand('oltp', 'RU_PER_SEC = 50');
    expect(states(await t.pass())).toEqual([['oltp', 'drift']]);
    expect(states(await t.pass())).toEqual([['oltp', 'drift']]);
    expect(drifts()).toEqual(['resource group oltp was changed by hand: RU_PER_SEC is 50, not 1000']);
    t.sim.alterByHand('oltp', 'RU_PER_SEC = 1000');
    expect(states(await t.pass())).toEqual([['oltp', 'ok']]);
    t.sim.alterByHand('oltp', 'RU_PER_SEC = 50');
    expect(states(await t.pass())).toEqual([['oltp', 'drift']]);
    expect(drifts()).toHaveLength(2);
    expect(t.changes()).toHaveLength(1);
  });
});

describe('TiDB v8.5.1 (simulated): what stops a pass', () => {
  test("a statement TiDB refuses is failed with TiDB's error, said once, and done once TiDB takes it", async () => {
    const t = await setUp('v8.5.1');
    t.sim.resourceControl = false;
    t.declare({ document: 'oltp', name: 'oltp', ruPerSecond: 100 });
    const reason =
      "CREATE RESOURCE GROUP failed: Resource control feature is disabled. Run `SET GLOBAL tidb_enable_resource_control='on'` to enable the feature";
    expect((await t.pass()).groups).toEqual([{ document: 'oltp', group: 'oltp', state: 'failed', reason }]);
    await t.pass();
    expect(t.events).toEqual([{ type: 'Warning', reason: 'ResourceGroupFailed', message: `resource group oltp: ${reason}` }]);
    expect(t.records.resourceGroups).toEqual({});
    t.sim.resourceControl = true;
    expect(states(await t.pass())).toEqual([['oltp', 'ok']]);
    expect(t.events.map((e) => e.reason)).toEqual(['ResourceGroupFailed', 'ResourceGroupCreated']);
    expect(t.records.resourceGroups.oltp).toEqual({ document: 'oltp', deletionPolicy: 'Retain', applied: { ruPerSecond: 100 } });
  });

  test("root's password not the Secret's: every declared group waits, saying why, and nothing is run", async () => {
    const t = await setUp('v8.5.1', 'another-Pw-1');
    t.declare({ document: 'oltp', name: 'oltp', ruPerSecond: 100 });
    const why = "root's password is not the one in the Secret c-init (key root)";
    expect(await t.pass()).toEqual({
      waiting: why,
      groups: [{ document: 'oltp', group: 'oltp', state: 'waiting', reason: why }],
      unmanaged: [],
      kept: [],
    });
    expect(t.sim.statements).toEqual([]);
  });
});

describe('TiDB v9.0.0 (simulated)', () => {
  test('BURSTABLE is turned off with BURSTABLE = OFF, and shown as OFF', async () => {
    const t = await setUp('v9.0.0');
    t.declare({ document: 'batch', name: 'batch', ruPerSecond: 500, burstable: true });
    await t.pass();
    expect(t.changes()).toEqual(['CREATE RESOURCE GROUP IF NOT EXISTS `batch` RU_PER_SEC = 500, PRIORITY = MEDIUM, BURSTABLE']);
    // Bare BURSTABLE is MODERATED on this line: burstable all the same.
    expect(t.sim.groups().find((g) => g.name === 'batch')?.burstable).toBe('MODERATED');
    expect(states(await t.pass())).toEqual([['batch', 'ok']]);
    t.declare({ document: 'batch', name: 'batch', ruPerSecond: 500 });
    await t.pass();
    expect(t.changes()[1]).toBe('ALTER RESOURCE GROUP `batch` RU_PER_SEC = 500, PRIORITY = MEDIUM, BURSTABLE = OFF');
    expect(t.sim.groups().find((g) => g.name === 'batch')?.burstable).toBe('OFF');
    expect(states(await t.pass())).toEqual([['batch', 'ok']]);
  });

  test('the default group, BURSTABLE UNLIMITED, is burstable: adopted without its burst mode changed, never unmanaged', async () => {
    const t = await setUp('v9.0.0');
    expect(t.sim.groups()).toEqual([
      { name: 'default', ruPerSec: 'UNLIMITED', priority: 'MEDIUM', burstable: 'UNLIMITED', queryLimit: null, background: null },
    ]);
    t.sim.createByHand('adhoc', 'RU_PER_SEC = 10');
    t.declare({ document: 'default', name: 'default', ruPerSecond: 8000, burstable: true });
    const first = await t.pass();
    expect(first.unmanaged).toEqual(['adhoc']);
    expect(t.changes()).toEqual(['ALTER RESOURCE GROUP `default` RU_PER_SEC = 8000, PRIORITY = MEDIUM']);
    expect(t.sim.groups().find((g) => g.name === 'default')).toMatchObject({ ruPerSec: '8000', burstable: 'UNLIMITED' });
    expect(states(await t.pass())).toEqual([['default', 'ok']]);
    // Its document gone: kept (default is never dropped), even were it Delete in the record.
    t.records.resourceGroups = { default: { ...t.records.resourceGroups.default, deletionPolicy: 'Delete' } };
    t.declare();
    const gone = await t.pass();
    expect(gone).toMatchObject({ groups: [], unmanaged: ['adhoc'], kept: ['default'] });
    expect(t.changes()).toHaveLength(1);
  });
});
