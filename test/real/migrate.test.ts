/**
 * Moving a running tidb-operator cluster to tidb-gitops, on a real API server (test/kube/), following
 * the "Migrating from tidb-operator" steps of docs/operations.md: the objects tidb-operator v1 creates for
 * examples/basic (test/kube/operator-basic.ts, built from the operator's source, owner references to
 * a TidbCluster included), the real StatefulSet and garbage-collector controllers, `kubectl` for
 * every step a user types, the shipped CLI for the report and the shipped controller for the rest.
 */
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { resourcePath, type Obj } from '../kube/client';
import { realApiSuite } from '../kube/suite';
import { operatorObjects, operatorTidbCluster, tidbClusterCrd } from '../kube/operator-basic';
import { RealWorld, type ApplyMode } from '../kube/world';
import { TEST_DIR } from '../support/paths';

const run = promisify(execFile);
const root = join(TEST_DIR, '..');
const suite = realApiSuite();
const { describeReal } = suite;

jest.setTimeout(300_000);

/** The API server's version: what Argo CD would pass as KUBE_VERSION. */
const kubeVersion = () => suite.cp().kubeVersion;
let world: RealWorld | undefined;
let seq = 0;
afterEach(async () => {
  const w = world;
  world = undefined;
  await w?.close();
});

/** The user's TidbCluster as committed to Git for the move: the example as it ran under the operator. */
function gitCluster(namespace: string, spec: Obj = {}): Obj {
  const tc = operatorTidbCluster(namespace);
  // A single TiKV cannot hand its leaders away: the controller waits evictLeaderTimeout (1m in the
  // example) before restarting it. Shorter here, to keep the test quick; it restarts nothing itself.
  return { ...tc, spec: { ...tc.spec, ...spec, tikv: { ...tc.spec.tikv, evictLeaderTimeout: '3s', ...(spec.tikv ?? {}) } } };
}

const renderFor = (cluster: Obj) => suite.render(cluster);

/** tidb-operator's discovery for one PD (its /new answer), while the operator's cluster starts. */
function operatorDiscovery(w: RealWorld): Promise<Server> {
  const server = createServer((req, res) => {
    const peer = Buffer.from((req.url ?? '').split('/')[2] ?? '', 'base64')
      .toString()
      .trim();
    const name = peer.split('.')[0];
    res.end(`--initial-cluster=${name}=http://${peer}`);
  });
  return new Promise((resolve) => server.listen(w.discoveryPort, '127.0.0.1', () => resolve(server)));
}

async function kubectl(args: string[]): Promise<string> {
  const { stdout } = await run('kubectl', [...args, '--kubeconfig', suite.cp().adminKubeconfig()], { maxBuffer: 32 * 1024 * 1024 });
  return stdout;
}

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(root, 'bin/tidb-gitops.js'), ...args], { maxBuffer: 32 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

const uids = (objects: Obj[]) => Object.fromEntries(objects.map((o) => [o.metadata.name, o.metadata.uid]));
const partitionOf = (sts: Obj | undefined): number | undefined => sts?.spec?.updateStrategy?.rollingUpdate?.partition;
const COMPONENTS = ['pd', 'tikv', 'tidb'] as const;
/** The `kubectl get` of docs/operations.md for the live objects of the cluster. */
const LIVE_KINDS = 'statefulsets,services,configmaps,deployments,serviceaccounts,roles,rolebindings';

describeReal('migrating a tidb-operator cluster (examples/basic) to tidb-gitops', () => {
  it.each<ApplyMode>(['client-side', 'server-side'])(
    'keeps every Pod and PVC through the move (%s apply); the controller then takes over and rolls one Pod at a time',
    async (mode) => {
      const namespace = `migrate-${++seq}`;
      const w = await RealWorld.start({
        cp: suite.cp(),
        cluster: gitCluster(namespace),
        render: renderFor,
        apply: mode,
        applyAtStart: false,
      });
      world = w;
      const dir = mkdtempSync(join(tmpdir(), 'tidb-gitops-migrate-'));
      try {
        // --- The cluster as tidb-operator runs it. ---
        await RealWorld.applyObjects(suite.cp(), [tidbClusterCrd()], 'server-side');
        await w.waitFor(
          async () =>
            (await kubectl([
              'get',
              'crd',
              'tidbclusters.pingcap.com',
              '-o',
              'jsonpath={.status.conditions[?(@.type=="Established")].status}',
            ])) === 'True',
          20_000,
          'the CRD',
        );
        const tc = await w.kube.create(operatorTidbCluster(namespace));
        for (const o of operatorObjects(namespace, tc.metadata.uid)) await w.kube.create(o, 'fieldManager=tidb-controller-manager');
        const discovery = await operatorDiscovery(w);
        await w.waitFor(
          async () => (await Promise.all(COMPONENTS.map((c) => w.settled(c, 1)))).every(Boolean),
          60_000,
          'the operator cluster to run',
        );
        await w.waitFor(() => w.pd.stores().length === 1, 20_000, 'the TiKV store');
        discovery.close();
        const pods = uids((await Promise.all(COMPONENTS.map((c) => w.pods(c)))).flat());
        const claims = uids(await w.kube.list(resourcePath('v1', 'PersistentVolumeClaim', namespace)));
        expect(Object.keys(pods).sort()).toEqual(['basic-pd-0', 'basic-tidb-0', 'basic-tikv-0']);
        expect(Object.keys(claims).sort()).toEqual(['pd-basic-pd-0', 'tikv-basic-tikv-0']);

        // --- Step 1: what the move changes, from what the cluster runs. ---
        const liveFile = join(dir, 'live.yaml');
        writeFileSync(
          liveFile,
          await kubectl(['get', LIVE_KINDS, '-n', namespace, '-l', 'app.kubernetes.io/instance=basic', '-o', 'yaml']),
        );
        const gitFile = join(dir, 'tidb-cluster.yaml');
        writeFileSync(gitFile, stringify(gitCluster(namespace)));
        const report = await cli(['diff', '--kube-version', kubeVersion(), '--exit-code', liveFile, gitFile]);
        if (process.env.TIDB_GITOPS_MIGRATION_REPORT && mode === 'client-side')
          writeFileSync(process.env.TIDB_GITOPS_MIGRATION_REPORT, report.stdout);
        expect(report.stderr).toBe('');
        expect(report.code).toBe(4); // changes, with a risk: the owner references
        expect(report.stdout).toContain('OLD is live');
        expect(report.stdout).toMatch(/- \*\*owner-reference\*\*: 16 objects are owned by TidbCluster basic/);
        // Nothing Kubernetes would refuse: same selectors, serviceNames and claim templates.
        expect(report.stdout).not.toMatch(/\*\*(pvc-template|selector|service-name|immutable-field)\*\*/);
        // The start scripts and config names differ from the operator's: each component rolls once, by the controller.
        for (const c of ['PD', 'TiKV', 'TiDB'])
          expect(report.stdout).toMatch(
            new RegExp(`#### ${c} \\(StatefulSet basic-${c.toLowerCase()}\\)\\n\\n- \\*\\*Rolling restart\\*\\*, one Pod at a time`),
          );

        // --- Step 2: stop the operator acting (paused; the operator itself is not running here) and orphan its objects. ---
        await kubectl(['patch', 'tidbcluster', 'basic', '-n', namespace, '--type', 'merge', '-p', '{"spec":{"paused":true}}']);
        await kubectl(['delete', 'tidbcluster', 'basic', '-n', namespace, '--cascade=orphan']);
        const owned = async () => {
          const all = (await kubectl(['get', LIVE_KINDS, '-n', namespace, '-o', 'json'])) as string;
          return (JSON.parse(all).items as Obj[]).filter((o) =>
            (o.metadata.ownerReferences ?? []).some((r: Obj) => r.kind === 'TidbCluster'),
          ).length;
        };
        await w.waitFor(async () => (await owned()) === 0, 30_000, 'the garbage collector to orphan the objects');

        // --- Step 3: apply what Git renders (as Argo CD or Flux does). ---
        await w.apply(w.objects, mode);
        await w.waitFor(
          async () => (await w.statefulSets()).every((s) => (s.status?.observedGeneration ?? 0) >= s.metadata.generation),
          10_000,
          'the StatefulSet controller',
        );
        await new Promise((r) => setTimeout(r, 2000));
        // The move itself recreated nothing: the operator's partition (= replicas) holds the new templates back.
        expect(uids((await Promise.all(COMPONENTS.map((c) => w.pods(c)))).flat())).toEqual(pods);
        expect(uids(await w.kube.list(resourcePath('v1', 'PersistentVolumeClaim', namespace)))).toEqual(claims);
        // Only the discovery Deployment's Pod is replaced (its template now runs the controller).
        expect(w.stops.filter((s) => s.component !== 'discovery')).toEqual([]);
        w.stops.length = 0;

        // --- Step 4: the controller takes over replicas and partition, and rolls the new templates safely. ---
        await w.startController();
        await w.waitFor(
          async () => w.stops.length === 3 && (await Promise.all(COMPONENTS.map((c) => w.settled(c, 1)))).every(Boolean),
          120_000,
          'the controller to roll the new templates',
        );
        expect(w.stops.map((s) => s.pod)).toEqual(['basic-pd-0', 'basic-tikv-0', 'basic-tidb-0']);
        for (const c of COMPONENTS) {
          const sts = (await w.sts(c))!;
          expect([sts.spec.replicas, partitionOf(sts)]).toEqual([1, 1]);
          expect(sts.status.currentRevision).toBe(sts.status.updateRevision);
        }
        // Data stays: the same claims, bound to the new Pods.
        expect(uids(await w.kube.list(resourcePath('v1', 'PersistentVolumeClaim', namespace)))).toEqual(claims);
        expect(w.pd.splitBrain).toEqual([]);
        expect(w.pd.members().map((m) => m.name)).toEqual(['basic-pd-0']);

        // --- Afterwards: a version bump from Git rolls PD, TiKV, TiDB, one Pod at a time. ---
        w.stops.length = 0;
        await w.applyCluster(gitCluster(namespace, { version: 'v8.5.8' }), mode);
        await w.waitFor(
          async () => (await Promise.all(COMPONENTS.map((c) => w.settled(c, 1)))).every(Boolean) && w.stops.length === 3,
          120_000,
          'the upgrade',
        );
        expect(w.stops.map((s) => s.pod)).toEqual(['basic-pd-0', 'basic-tikv-0', 'basic-tidb-0']);
        for (const c of COMPONENTS) expect(w.kubelet.maxDown(c)).toBe(1);
        expect(w.forbidden()).toEqual([]);
        const image = (p: Obj) => p.spec.containers.find((x: Obj) => x.name === 'tidb')?.image;
        expect((await w.pods('tidb')).map(image)).toEqual(['pingcap/tidb:v8.5.8']);
        for (const c of COMPONENTS) expect(partitionOf(await w.sts(c))).toBe(1);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
