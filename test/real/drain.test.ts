/**
 * Node drains against the rendered PodDisruptionBudgets on a real API server and controller manager
 * (its disruption controller keeps the budgets' status; the Eviction API enforces them), with
 * `kubectl drain` as an administrator runs it, the shipped controller, and the tests' kubelet
 * running the PD and TiKV preStop hooks' request against the controller as the hook's script makes it.
 */
import { execFile } from 'node:child_process';
import http from 'node:http';
import { promisify } from 'node:util';
import type { Obj } from '../kube/client';
import { realApiSuite } from '../kube/suite';
import { RealWorld } from '../kube/world';
import { simCluster } from '../sim/controller-process';
import { PRESTOP_AGAIN, PRESTOP_ASK_SECONDS } from '../../src/tidbcluster/guard-rails';

const run = promisify(execFile);
const suite = realApiSuite();
const { describeReal } = suite;

jest.setTimeout(240_000);

let world: RealWorld | undefined;
afterEach(async () => {
  const w = world;
  world = undefined;
  if (!w) return;
  try {
    expect(w.forbidden()).toEqual([]);
  } finally {
    await w.close();
  }
});

/** `kubectl drain NODE`, as an administrator runs it: its exit code and everything it printed. */
async function drain(w: RealWorld, node: string, timeout: string): Promise<{ code: number; output: string }> {
  try {
    const r = await run(
      'kubectl',
      ['drain', node, '--ignore-daemonsets', '--delete-emptydir-data', `--timeout=${timeout}`, '--kubeconfig', w.cp.adminKubeconfig()],
      { maxBuffer: 16 * 1024 * 1024 },
    );
    return { code: 0, output: r.stdout + r.stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof err.code === 'number' ? err.code : 1, output: `${err.stdout ?? ''}${err.stderr ?? ''}` };
  }
}

/**
 * What the TiKV preStop hook does (`GET /prestop/<pod>?wait=25` on discovery, again while the answer
 * says `wait: `), from the Pod's own address.
 */
async function preStopRequest(w: RealWorld, pod: Obj): Promise<void> {
  const answers = (w as RealWorld & { preStopAnswers?: string[] }).preStopAnswers!;
  const ask = () =>
    new Promise<string>((resolve) => {
      const req = http.get(
        {
          host: '127.0.0.1',
          port: w.discoveryPort,
          path: `/prestop/${pod.metadata.name}?wait=${PRESTOP_ASK_SECONDS}`,
          localAddress: w.kubelet.ipOf(pod.metadata.name),
        },
        (res) => {
          let body = '';
          res.on('data', (d) => (body += d));
          res.on('end', () => resolve(`${res.statusCode} ${body.trim()}`));
        },
      );
      req.on('error', (e) => resolve(`error ${e.message}`));
    });
  for (;;) {
    const answer = await ask();
    if (answer.startsWith(`200 ${PRESTOP_AGAIN}`)) continue;
    answers.push(`${pod.metadata.name} ${answer}`);
    return;
  }
}

/** Two Nodes: Pods of even ordinal on `<namespace>-a` (two TiKV Pods, two PD Pods), odd ones on `<namespace>-b`. */
async function twoNodes(namespace: string): Promise<RealWorld> {
  const w = await RealWorld.start({
    cp: suite.cp(),
    cluster: simCluster({}, { namespace }),
    render: suite.render,
    kubelet: { nodes: [{ name: `${namespace}-a` }, { name: `${namespace}-b` }] },
  });
  world = w;
  (w as RealWorld & { preStopAnswers?: string[] }).preStopAnswers = [];
  w.kubelet.preStop = (pod) => preStopRequest(w, pod);
  await w.startController();
  await w.waitFor(
    async () => (await w.settled('pd', 3)) && (await w.settled('tikv', 3)) && (await w.settled('tidb', 2)),
    90_000,
    'the cluster to come up',
  );
  // The disruption controller has counted every Pod healthy.
  await w.waitFor(
    async () => {
      const budgets = await w.kube.list(`/apis/policy/v1/namespaces/${namespace}/poddisruptionbudgets`);
      return (
        budgets.length === 3 &&
        budgets.every(
          (b) =>
            b.status?.observedGeneration === b.metadata.generation &&
            b.status?.currentHealthy === b.status?.expectedPods &&
            b.status?.disruptionsAllowed === 1,
        )
      );
    },
    30_000,
    'the budgets to allow one disruption each',
  );
  return w;
}

const nodeOf = async (w: RealWorld, pod: string): Promise<string | undefined> =>
  (await w.kube.get(`/api/v1/namespaces/${w.namespace}/pods/${pod}`).catch(() => undefined))?.spec?.nodeName;

describeReal('node drains and the disruption budgets', () => {
  it('kubectl drain of a Node with two TiKV Pods evicts one, is refused the second until the first is back and Ready, and no leader is lost, of PD or of a region', async () => {
    const w = await twoNodes('drain-a');
    expect(await nodeOf(w, 'c-tikv-0')).toBe('drain-a-a');
    expect(await nodeOf(w, 'c-tikv-2')).toBe('drain-a-a');
    // Each Pod that comes back takes 3 seconds to be Ready: long enough for the drain's next try to meet it not Ready.
    const gate = w.kubelet.readinessGate;
    const born = new Map<string, number>();
    w.kubelet.on('podCreated', (p: Obj) => born.set(p.metadata.uid, Date.now()));
    w.kubelet.readinessGate = (p) => gate(p) && Date.now() - (born.get(p.metadata.uid) ?? 0) > 3000;
    const readyAt = new Map<string, number>();
    const deletedAt = new Map<string, number>();
    w.kubelet.on('podReady', (p: Obj) => readyAt.set(p.metadata.name, Date.now()));
    const stop = w.kube.watch(`/api/v1/namespaces/${w.namespace}/pods`, '', (_type, p) => {
      if (p.metadata.deletionTimestamp && !deletedAt.has(p.metadata.uid)) deletedAt.set(p.metadata.uid, Date.now());
    });
    // The PD leader on the drained Node: its leadership must move before it stops.
    await fetch(`http://${w.kubelet.ipOf('c-pd-1')}:2379/pd/api/v1/leader/transfer/c-pd-0`, { method: 'POST' });
    await w.waitFor(() => w.pd.leader() === 'c-pd-0', 10_000, 'c-pd-0 to lead PD');
    const uids = Object.fromEntries(
      await Promise.all(
        ['c-tikv-0', 'c-tikv-2'].map(async (n) => [n, (await w.kube.get(`/api/v1/namespaces/${w.namespace}/pods/${n}`))!.metadata.uid]),
      ),
    );
    readyAt.clear();

    const r = await drain(w, 'drain-a-a', '150s');
    stop();
    expect(r.output).toContain('node/drain-a-a drained');
    expect(r.code).toBe(0);
    // The budget held one of the two back, as the Eviction API answers it (429), which kubectl retries.
    expect(r.output).toMatch(/Cannot evict pod as it would violate the pod's disruption budget/);
    const order = ['c-tikv-0', 'c-tikv-2'].sort((a, b) => deletedAt.get(uids[a])! - deletedAt.get(uids[b])!);
    // The second was evicted only after the first one's successor was Ready.
    expect(deletedAt.get(uids[order[1]])!).toBeGreaterThan(readyAt.get(order[0])!);
    expect(w.kubelet.maxDown('tikv')).toBe(1);
    expect(w.kubelet.maxDown('pd')).toBe(1);
    // Each drained TiKV Pod's hook waited until the controller had moved its leaders away, and none stopped with one.
    const answers = (w as RealWorld & { preStopAnswers?: string[] }).preStopAnswers!;
    expect(answers.filter((a) => /c-tikv-[02] 200 store \d+ of c-tikv-[02] has no region leaders left/.test(a))).toHaveLength(2);
    expect(w.pd.stopsWithLeaders).toEqual([]);
    expect(await w.events('StoppedWithLeaders')).toEqual([]);
    expect(w.pd.stopsWhileLeader).toEqual([]);
    expect(answers.filter((a) => /^c-pd-0 200 c-pd-0 does not lead PD/.test(a))).toHaveLength(1);
    // The leadership moved off c-pd-0 first; the member it went to (the operator's choice, the highest
    // ordinal: c-pd-2, on the same Node) handed it on again when its own turn came.
    const transfers = (await w.events('DrainPDLeaderTransfer')).map((e) => e.involvedObject?.name ?? e.regarding?.name);
    expect(transfers[0]).toBe('c-pd-0');
    expect(transfers.every((p) => p === 'c-pd-0' || p === 'c-pd-2')).toBe(true);
    expect(answers.filter((a) => /^c-pd-2 200 /.test(a)).every((a) => /does not lead PD/.test(a))).toBe(true);
    expect((await w.events('DrainEvictLeader')).map((e) => e.involvedObject?.name ?? e.regarding?.name).sort()).toEqual([
      'c-tikv-0',
      'c-tikv-2',
    ]);
    // Once the Pods are back and Ready, the controller removes the schedulers it added for the drain.
    await w.waitFor(() => w.pd.evictSchedulers().length === 0, 30_000, "the drain's evict-leader schedulers to go");
  });

  it('a crash-looping TiDB never holds a drain: its budget evicts a Pod that is not Ready whatever it says', async () => {
    const w = await twoNodes('drain-b');
    // Both TiDB Pods stop being Ready (crash-looping): the budget allows no disruption now.
    const gate = w.kubelet.readinessGate;
    const broken = new Set(['c-tidb-0', 'c-tidb-1']);
    w.kubelet.readinessGate = (p) => !broken.has(p.metadata.name) && gate(p);
    await w.waitFor(
      async () => {
        const b = await w.kube.get(`/apis/policy/v1/namespaces/${w.namespace}/poddisruptionbudgets/c-tidb`);
        return b?.status?.currentHealthy === 0 && b?.status?.disruptionsAllowed === 0;
      },
      30_000,
      'the TiDB budget to allow no disruption',
    );
    // TiDB holds no replica: as rendered (AlwaysAllow), the drain of Node b (c-tidb-1, and a PD and a
    // TiKV Pod that serve) goes through.
    const r = await drain(w, 'drain-b-b', '120s');
    expect(r.output).toContain('node/drain-b-b drained');
    expect(r.output).toContain('pod/c-tidb-1 evicted');
    expect(r.code).toBe(0);
  });

  it('a drain is refused while a TiKV store is Down in PD, though its Pod still runs, and goes through once the store is Up', async () => {
    const w = await twoNodes('drain-c');
    // c-tikv-1 (Node b) keeps running, but PD stops hearing from its store (a hung server, a partition):
    // TiKV has no readiness probe, so its container stays Ready; only the readiness gate says it does not serve.
    const gate = w.kubelet.readinessGate;
    w.kubelet.readinessGate = (p) => p.metadata.name === 'c-tikv-1' || gate(p);
    w.pd.tikvStop('c-tikv-1');
    await w.waitFor(() => w.pd.store('c-tikv-1')?.state === 'Down', 30_000, 'store of c-tikv-1 to be Down');
    const pod = async (name: string) => (await w.kube.get(`/api/v1/namespaces/${w.namespace}/pods/${name}`))!;
    const condition = async (name: string, type: string) => ((await pod(name)).status?.conditions ?? []).find((c: Obj) => c.type === type);
    await w.waitFor(async () => (await condition('c-tikv-1', 'Ready'))?.status === 'False', 30_000, 'c-tikv-1 not to be Ready');
    expect(await condition('c-tikv-1', 'tidb-gitops.io/serving')).toMatchObject({ status: 'False', reason: 'StoreNotUp' });
    expect(await condition('c-tikv-1', 'ContainersReady')).toMatchObject({ status: 'True' });
    const budget = () => w.kube.get(`/apis/policy/v1/namespaces/${w.namespace}/poddisruptionbudgets/c-tikv`);
    await w.waitFor(async () => (await budget())?.status?.disruptionsAllowed === 0, 30_000, 'the TiKV budget to allow no disruption');
    const uids = Object.fromEntries(await Promise.all(['c-tikv-0', 'c-tikv-2'].map(async (n) => [n, (await pod(n)).metadata.uid])));

    // The drain of Node a, holding two TiKV Pods that serve, would take a second replica of every
    // region that has one on the Down store: the Eviction API refuses both.
    const held = await drain(w, 'drain-c-a', '15s');
    expect(held.code).not.toBe(0);
    expect(held.output).toMatch(/evicting pod drain-c\/c-tikv-[02][\s\S]*Cannot evict pod as it would violate the pod's disruption budget/);
    for (const n of ['c-tikv-0', 'c-tikv-2']) {
      const { uid, deletionTimestamp } = (await pod(n)).metadata;
      expect({ n, uid, deletionTimestamp }).toEqual({ n, uid: uids[n], deletionTimestamp: undefined });
    }

    // The store comes back: Up, its leaders balanced back, the Pod serving and Ready; the drain goes through.
    w.pd.tikvStart('c-tikv-1');
    await w.waitFor(async () => (await condition('c-tikv-1', 'Ready'))?.status === 'True', 60_000, 'c-tikv-1 to be Ready again');
    expect(await condition('c-tikv-1', 'tidb-gitops.io/serving')).toMatchObject({ status: 'True', reason: 'StoreUp' });
    const r = await drain(w, 'drain-c-a', '150s');
    expect(r.output).toContain('node/drain-c-a drained');
    expect(r.code).toBe(0);
    expect(w.kubelet.maxDown('tikv')).toBe(1);
  });
});
