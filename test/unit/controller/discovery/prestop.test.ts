/**
 * How long discovery holds a deleted TiKV Pod's preStop hook (`/prestop/<pod>`): while the store's
 * region leader count drops, up to the Pod's wait; not once the count has stopped dropping for the
 * stall window. A Pod let go with leaders is told (the Event and the status line come from it), and
 * the hook's short asks (`?wait=25`) carry the wait on where the last one left it.
 */
import { Discovery } from '../../../../src/controller/discovery/discovery';
import { LEADER_STALL_MS } from '../../../../src/controller/discovery/prestop';
import { parseClusterInfo } from '../../../../src/controller/model/cluster';
import type { PdClient, PdStore } from '../../../../src/controller/clients/pd';
import { StoppedWithLeadersLog, type StoppedWithLeaders } from '../../../../src/controller/records/stopped-with-leaders';
import { StatusRecords } from '../../../../src/controller/records/store';
import { statusDocument } from '../../../../src/controller/reconcile/status';
import type { KubeAccess } from '../../../../src/controller/clients/kube';

const CLUSTER_JSON = JSON.stringify({
  name: 'c',
  clusterDomain: '',
  acrossK8s: false,
  tls: false,
  discoveryMtls: false,
  pdAddresses: [],
  cluster: null,
  components: ['tidb', 'pd', 'tikv'],
});

const pod = (o: { terminating?: boolean; grace?: number } = {}) => ({
  metadata: {
    name: 'c-tikv-0',
    uid: 'uid-0',
    labels: { 'app.kubernetes.io/component': 'tikv', 'app.kubernetes.io/instance': 'c' },
    ...(o.terminating !== false && { deletionTimestamp: new Date() }),
  },
  spec: { terminationGracePeriodSeconds: o.grace ?? 600 },
  status: { podIP: '10.0.0.7' },
});

const store = (leaderCount: number): PdStore => ({
  id: 5,
  address: 'c-tikv-0.c-tikv-peer.ns.svc:20160',
  state: 'Up',
  leaderCount,
  regionCount: 9000,
  labels: {},
});

/**
 * A PD whose store of c-tikv-0 has the given leader counts, one per look, the last one for ever; each
 * look takes 10 seconds of the test's clock.
 */
function world(counts: number[], grace = 600, tickPerRead = 0) {
  let t = 0;
  let looks = 0;
  const pd = {
    stores: async () => {
      t += 10_000;
      return [store(counts[Math.min(looks++, counts.length - 1)])];
    },
  } as unknown as PdClient;
  const told: StoppedWithLeaders[] = [];
  const pods = [pod({ grace })];
  const discovery = new Discovery({
    cluster: parseClusterInfo(CLUSTER_JSON, 'ns'),
    pods: () => pods,
    pdReplicas: () => 3,
    pdStatefulSet: () => ({ replicas: 3 }),
    pdClients: [pd],
    checkSource: true,
    note: () => {},
    preStop: { pollMs: 1, now: () => (t += tickPerRead) },
    stoppedWithLeaders: (e) => told.push(e),
  });
  return { discovery, told, clock: () => t, pods, ask: (query = '') => discovery.handle('GET', `/prestop/c-tikv-0${query}`, '10.0.0.7') };
}

describe('the preStop wait of a TiKV Pod', () => {
  it('lasts as long as the leaders keep moving, far past the Kubernetes default grace period', async () => {
    const w = world([1000, 900, 800, 700, 600, 500, 400, 300, 200, 100, 0]);
    expect(await w.ask()).toEqual({ status: 200, body: 'store 5 of c-tikv-0 has no region leaders left\n' });
    expect(w.clock()).toBe(110_000);
    expect(w.told).toEqual([]);
  });

  it('lets the Pod go once the count has not dropped for the stall window, and says so', async () => {
    const w = world([500, 400, 400]);
    const r = await w.ask();
    // The count last dropped at the second look (20 s); a minute later the Pod is let go.
    expect(w.clock()).toBe(20_000 + LEADER_STALL_MS);
    expect(r).toEqual({ status: 200, body: 'stopped waiting after 80s: store 5 still has 400 region leaders, none moved for 60s\n' });
    expect(w.told).toEqual([
      {
        pod: 'c-tikv-0',
        store: 5,
        leaders: 400,
        why: 'stalled',
        waitedSeconds: 80,
        at: new Date(80_000).toISOString(),
        message:
          'c-tikv-0 stopped with 400 region leaders still on store 5 after waiting 80s: the count had not dropped for 60s; clients of those regions wait for a new leader to be elected',
      },
    ]);
  });

  it('ends at the Pod’s wait (its grace period less 10 seconds, and 1 for the hook to hear) however the count moves', async () => {
    const w = world(
      Array.from({ length: 100 }, (_, i) => 1000 - i),
      60,
    );
    const r = await w.ask();
    expect(r).toEqual({ status: 200, body: 'stopped waiting after 50s: store 5 still has 996 region leaders\n' });
    expect(w.told.map((e) => [e.why, e.leaders])).toEqual([['deadline', 996]]);
    expect(w.told[0].message).toMatch(/its wait was over .*a longer spec\.tikv\.terminationGracePeriodSeconds gives PD more time/);
  });

  it('answers the hook’s short asks within their seconds, and carries the wait on from one ask to the next', async () => {
    const w = world([500, 450, 450]);
    expect(await w.ask('?wait=25')).toEqual({ status: 200, body: 'wait: store 5 still has 450 region leaders\n' });
    expect(w.clock()).toBe(30_000);
    expect(await w.ask('?wait=25')).toEqual({ status: 200, body: 'wait: store 5 still has 450 region leaders\n' });
    expect(w.clock()).toBe(60_000);
    // No drop since 20 s: the third ask ends the wait at 80 s, as one long ask would have.
    expect(await w.ask('?wait=25')).toEqual({
      status: 200,
      body: 'stopped waiting after 80s: store 5 still has 450 region leaders, none moved for 60s\n',
    });
    expect(w.told.map((e) => [e.why, e.leaders, e.waitedSeconds])).toEqual([['stalled', 450, 80]]);
  });

  it('lets a Pod that is not being deleted go at once when the hook asks with ?wait (a restart runs the hook too)', async () => {
    const w = world([10], 600, 1000);
    w.pods[0] = pod({ terminating: false });
    expect(await w.ask('?wait=25')).toEqual({ status: 200, body: 'c-tikv-0 is not being deleted: nothing to wait for\n' });
    expect(w.told).toEqual([]);
  });
});

describe('the status document', () => {
  it('lists the Pods let go with leaders, newest first', () => {
    const log = new StoppedWithLeadersLog();
    const entry = (pod: string, at: string): StoppedWithLeaders => ({
      pod,
      store: 5,
      leaders: 7,
      why: 'deadline',
      waitedSeconds: 590,
      at,
      message: `${pod} stopped with 7 region leaders`,
    });
    log.add(entry('c-tikv-0', '2026-01-01T00:00:00.000Z'));
    log.add(entry('c-tikv-1', '2026-01-01T00:10:00.000Z'));
    const kube = { getConfigMapData: async () => undefined, applyConfigMap: async () => {} } as unknown as Pick<
      KubeAccess,
      'getConfigMapData' | 'applyConfigMap'
    >;
    const records = new StatusRecords(kube, 'c');
    const doc = JSON.parse(statusDocument('c', [], [], undefined, records, undefined, undefined, undefined, undefined, log.list()));
    expect(doc.stoppedWithLeaders.map((e: StoppedWithLeaders) => e.pod)).toEqual(['c-tikv-1', 'c-tikv-0']);
    expect(doc.stoppedWithLeaders[0].message).toBe('c-tikv-1 stopped with 7 region leaders');
    expect(JSON.parse(statusDocument('c', [], [], undefined, records, undefined)).stoppedWithLeaders).toBeUndefined();
  });
});
