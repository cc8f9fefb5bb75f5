/**
 * The rendered manifests and the shipped controller against a real Kubernetes API server and
 * controller manager (v1.32, see test/kube/), with the PD simulator playing PD and TiKV. Runs when
 * the binaries are present (TIDB_GITOPS_KUBE_ASSETS, or .kube-assets from `npm run kube-assets`,
 * which `.ci/run` always prepares); otherwise the suite says why it was skipped.
 *
 * Every scenario ends by checking the API server's audit log: the controller, authenticated with the
 * rendered ServiceAccount's token, never got a 403 from the real RBAC authorizer.
 */
import { pathOf, resourcePath, type Obj } from '../kube/client';
import { realApiSuite } from '../kube/suite';
import { RealWorld, type ApplyMode } from '../kube/world';
import { simCluster } from '../sim/controller-process';
import { KubeSim } from '../sim/kube-api';
import { expandableStorage } from '../kube/resizer';

const suite = realApiSuite();
const { describeReal } = suite;

jest.setTimeout(240_000);

const CONTROLLER = 'tidb-gitops-controller';
let world: RealWorld | undefined;
let seq = 0;

afterEach(async () => {
  const w = world;
  world = undefined;
  if (!w) return;
  try {
    expect(w.forbidden()).toEqual([]);
    expect(w.violations).toEqual([]);
  } finally {
    await w.close();
  }
});

const upgraded = (spec: Record<string, unknown> = {}) => ({ version: 'v8.5.1', ...spec });
const clusterIn = (namespace: string, spec: Record<string, unknown> = {}) => simCluster(spec, { namespace });

/** A fresh namespace with a 3 PD / 3 TiKV / 2 TiDB cluster up and settled under the controller. */
async function running(spec: Record<string, unknown> = {}, apply: ApplyMode = 'server-side'): Promise<RealWorld> {
  const w = await RealWorld.start({ cp: suite.cp(), cluster: clusterIn(`real-${++seq}`, spec), render: suite.render, apply });
  world = w;
  await w.startController();
  await w.waitFor(() => allSettled(w), 90_000, 'the cluster to come up');
  return w;
}

const allSettled = async (w: RealWorld, tidb = 2): Promise<boolean> =>
  (await w.settled('pd', 3)) && (await w.settled('tikv', 3)) && (await w.settled('tidb', tidb));
const stopsOf = (w: RealWorld, component: string) => w.stops.filter((s) => s.component === component).map((s) => s.pod);
const partitionOf = (sts: Obj | undefined): number | undefined => sts?.spec?.updateStrategy?.rollingUpdate?.partition;

/**
 * How the API server refuses new claim templates on TiKV's StatefulSet: up to 1.36 one error for the
 * whole spec, from 1.37 one for the immutable field (`pkg/apis/apps/validation/validation.go`).
 */
function claimTemplatesRefused(): RegExp {
  return Number(suite.cp().kubeVersion.split('.')[1]) >= 37
    ? /"c-tikv" is invalid: spec\.volumeClaimTemplates: Invalid value: .*: field is immutable/
    : /"c-tikv" is invalid: spec: Forbidden: updates to statefulset spec for fields other than/;
}

/**
 * Flux's first step (fluxcd/pkg `ssa/manager_apply.go` `ApplyAll`): a server-side dry-run apply of
 * every object, before any is applied. The refusals, one per line; '' when every object passes.
 */
async function fluxDryRun(w: RealWorld, objects: readonly Obj[]): Promise<string> {
  const refused: string[] = [];
  for (const o of objects) {
    const res = await w.kube.request('PATCH', `${pathOf(o)}?fieldManager=kustomize-controller&force=true&dryRun=All`, {
      body: o,
      contentType: 'application/apply-patch+yaml',
    });
    if (res.status >= 300) refused.push(`${o.kind}/${o.metadata.name}: ${res.body?.message ?? res.text}`);
  }
  return refused.join('\n');
}

/** The field managers of the listed fields (`spec.replicas`...), from managedFields. */
function ownersOf(obj: Obj, paths: string[][]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const p of paths) {
    out[p.join('.')] = (obj.metadata.managedFields ?? [])
      .filter((m: Obj) => {
        let node = m.fieldsV1;
        for (const k of p) node = node?.[`f:${k}`];
        return node !== undefined;
      })
      .map((m: Obj) => m.manager)
      .sort();
  }
  return out;
}

describeReal('a rendered cluster on a real API server', () => {
  it('bootstraps PD through discovery, holds every partition at replicas, and says Normal', async () => {
    const w = await running();
    expect(
      w.pd
        .members()
        .map((m) => m.name)
        .sort(),
    ).toEqual(['c-pd-0', 'c-pd-1', 'c-pd-2']);
    expect(w.pd.splitBrain).toEqual([]);
    expect(await w.events('PDBootstrap')).toHaveLength(1);
    // The status ConfigMap follows the StatefulSets' status, which can lag the Pods for a moment.
    const normal = (s: Awaited<ReturnType<RealWorld['status']>>) =>
      ['pd', 'tikv', 'tidb'].every((c) => s?.components[c]?.phase === 'Normal');
    await w.waitFor(
      async () => {
        const s = await w.status();
        return s?.components.tikv?.stores?.length === 3 && normal(s);
      },
      10_000,
      'the stores and the Normal phases in the status',
    );
    const status = (await w.status())!;
    for (const c of ['pd', 'tikv', 'tidb']) expect(status.components[c]).toMatchObject({ phase: 'Normal', reason: 'up to date' });
    // The API server stores the rendered updateStrategy-less StatefulSet; the controller owns the strategy and its partition.
    const pd = (await w.sts('pd'))!;
    // From 1.37 the server fills in maxUnavailable 1 wherever it defaults a rollingUpdate.
    const gated = Number(suite.cp().kubeVersion.split('.')[1]) >= 37 ? { maxUnavailable: 1 } : {};
    expect(pd.spec.updateStrategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { partition: 3, ...gated } });
    expect(
      ownersOf(pd, [
        ['spec', 'replicas'],
        ['spec', 'updateStrategy', 'rollingUpdate', 'partition'],
        ['spec', 'updateStrategy', 'type'],
      ]),
    ).toEqual({
      'spec.replicas': [CONTROLLER],
      'spec.updateStrategy.rollingUpdate.partition': [CONTROLLER],
      'spec.updateStrategy.type': [CONTROLLER],
    });
  });

  it('rolls a version bump one Pod at a time, highest ordinal first, PD then TiKV then TiDB, without restarting a leader', async () => {
    const w = await running();
    const before = w.stops.length;
    await w.applyCluster(clusterIn(w.namespace, upgraded()));
    const tidbImage = (p: Obj) => p.spec.containers.find((c: Obj) => c.name === 'tidb').image;
    await w.waitFor(
      async () => (await allSettled(w)) && (await w.pods('tidb')).every((p) => tidbImage(p) === 'pingcap/tidb:v8.5.1'),
      120_000,
      'the upgrade to finish',
    );
    expect(w.stops.length - before).toBe(8);
    expect(stopsOf(w, 'pd')).toEqual(['c-pd-2', 'c-pd-1', 'c-pd-0']);
    expect(stopsOf(w, 'tikv')).toEqual(['c-tikv-2', 'c-tikv-1', 'c-tikv-0']);
    expect(stopsOf(w, 'tidb')).toEqual(['c-tidb-1', 'c-tidb-0']);
    const last = (c: string) => Math.max(...w.stops.filter((s) => s.component === c).map((s) => s.time));
    const first = (c: string) => Math.min(...w.stops.filter((s) => s.component === c).map((s) => s.time));
    expect(first('tikv')).toBeGreaterThan(last('pd'));
    expect(first('tidb')).toBeGreaterThan(last('tikv'));
    expect(w.kubelet.maxDown('pd')).toBe(1);
    expect(w.kubelet.maxDown('tikv')).toBe(1);
    expect(w.kubelet.maxDown('tidb')).toBe(1);
    expect(w.pd.stopsWhileLeader).toEqual([]);
    expect(w.pd.stopsWithLeaders).toEqual([]);
    expect(w.pd.evictSchedulers()).toEqual([]);
    // Each store, once without leaders by PD's count and its own, had log backup flushed before it stopped.
    for (const pod of ['c-tikv-2', 'c-tikv-1', 'c-tikv-0']) {
      const stop = w.stops.find((s) => s.pod === pod)!.time;
      expect(w.tikv.flushes.filter((f) => f.pod === pod && f.time <= stop).map((f) => f.leaders)).toEqual([0]);
    }
    // v8.5.0 -> v8.5.1 needs DDL paused: around the TiDB restarts, and forgotten in the status afterwards.
    await w.waitFor(
      async () => w.tidb.upgradeOps.length === 2 && (await w.status())?.smoothUpgrade === undefined,
      30_000,
      'DDL to be resumed',
    );
    const tidbStops = w.stops.filter((s) => s.component === 'tidb').map((s) => s.time);
    expect(w.tidb.upgradeOps.map((o) => [o.op, o.changed])).toEqual([
      ['start', true],
      ['finish', true],
    ]);
    expect(w.tidb.upgradeOps[0].time).toBeLessThan(Math.min(...tidbStops));
    expect(w.tidb.upgradeOps[1].time).toBeGreaterThan(Math.max(...tidbStops));
  });

  it('runs PD micro-services and upgrades TSO, then scheduling, then PD, each primary handing over before its restart', async () => {
    const ms = (version: string) => ({
      version,
      pd: { replicas: 3, requests: { storage: '1Gi' }, mode: 'ms' },
      pdms: [
        { name: 'tso', replicas: 2 },
        { name: 'scheduling', replicas: 2 },
      ],
    });
    const w = await running(ms('v8.5.0'), 'client-side');
    await w.waitFor(async () => (await w.settled('tso', 2)) && (await w.settled('scheduling', 2)), 60_000, 'the micro-services to come up');
    await w.applyCluster(clusterIn(w.namespace, ms('v8.5.1')));
    const image = (p: Obj, c: string) => p.spec.containers.find((x: Obj) => x.name === c).image;
    const done = async () =>
      (await allSettled(w)) &&
      (await w.settled('tso', 2)) &&
      (await w.settled('scheduling', 2)) &&
      (await w.pods('pd')).every((p) => image(p, 'pd') === 'pingcap/pd:v8.5.1');
    await w.waitFor(done, 180_000, 'the upgrade to finish');
    expect(stopsOf(w, 'tso')).toEqual(['c-tso-1', 'c-tso-0']);
    expect(stopsOf(w, 'scheduling')).toEqual(['c-scheduling-1', 'c-scheduling-0']);
    expect(stopsOf(w, 'pd')).toEqual(['c-pd-2', 'c-pd-1', 'c-pd-0']);
    const last = (c: string) => Math.max(...w.stops.filter((s) => s.component === c).map((s) => s.time));
    const first = (c: string) => Math.min(...w.stops.filter((s) => s.component === c).map((s) => s.time));
    expect(first('scheduling')).toBeGreaterThan(last('tso'));
    expect(first('pd')).toBeGreaterThan(last('scheduling'));
    expect(w.kubelet.maxDown('tso')).toBe(1);
    expect(w.kubelet.maxDown('scheduling')).toBe(1);
    // No server stopped while it was its service's primary.
    const pdms = w.pdms!;
    for (const stop of w.stops.filter((s) => s.component === 'tso' || s.component === 'scheduling')) {
      const primary = pdms.elections.filter((e) => e.service === stop.component && e.time <= stop.time).at(-1)?.pod;
      expect({ stop: stop.pod, primary }).not.toEqual({ stop: stop.pod, primary: stop.pod });
    }
    expect(pdms.transfers.length).toBeGreaterThanOrEqual(2);
    expect(w.pd.stopsWhileLeader).toEqual([]);
  });

  it('leaves replicas and partition alone when Git is re-applied mid-rollout, client-side and server-side', async () => {
    const w = await running();
    // Hold TiDB's rollout at its first step: a Pod at the new revision stays not Ready until released.
    let hold = true;
    const oldRevision = (await w.sts('tidb'))!.status.updateRevision;
    const gate = w.kubelet.readinessGate;
    w.kubelet.readinessGate = (pod) =>
      gate(pod) &&
      !(
        hold &&
        pod.metadata.labels?.['app.kubernetes.io/component'] === 'tidb' &&
        pod.metadata.labels?.['controller-revision-hash'] !== oldRevision
      );
    await w.applyCluster(clusterIn(w.namespace, { tidb: { replicas: 2, version: 'v8.5.1' } }));
    // Mid-rollout: c-tidb-1 restarted at the new revision (not Ready, held), the partition raised back, c-tidb-0 waiting.
    await w.waitFor(
      async () => {
        const pod1 = (await w.pods('tidb')).find((p) => p.metadata.name === 'c-tidb-1');
        return (
          pod1 !== undefined && pod1.metadata.labels['controller-revision-hash'] !== oldRevision && partitionOf(await w.sts('tidb')) === 2
        );
      },
      60_000,
      'the TiDB rollout to step once and wait',
    );
    // The status follows the StatefulSet's status, whose replica count dips while c-tidb-1 is re-created.
    await w.waitFor(async () => (await w.status())?.components.tidb.phase === 'Upgrading', 10_000, 'the status to say Upgrading');
    const stops = w.stops.length;
    const snapshot = async () =>
      (await w.statefulSets()).map((s) => [s.metadata.name, s.spec.replicas, partitionOf(s), s.spec.updateStrategy.type]);
    const held = await snapshot();
    for (const mode of ['client-side', 'server-side'] as const) {
      await w.apply(w.objects, mode);
      expect(await snapshot()).toEqual(held);
      const tidb = (await w.sts('tidb'))!;
      expect(
        ownersOf(tidb, [
          ['spec', 'replicas'],
          ['spec', 'updateStrategy', 'rollingUpdate', 'partition'],
        ]),
      ).toEqual({
        'spec.replicas': [CONTROLLER],
        'spec.updateStrategy.rollingUpdate.partition': [CONTROLLER],
      });
    }
    expect(w.stops.length).toBe(stops);
    hold = false;
    await w.waitFor(() => allSettled(w), 60_000, 'the rollout to finish');
    expect(stopsOf(w, 'tidb')).toEqual(['c-tidb-1', 'c-tidb-0']);
  });

  it('switches a component to OnDelete and back from Git, client-side and server-side, restarting nothing by itself', async () => {
    const w = await running({}, 'client-side');
    for (const [mode, version] of [
      ['client-side', 'v8.5.1'],
      ['server-side', 'v8.5.2'],
    ] as const) {
      const stops = w.stops.length;
      const onDelete = await w.applyCluster(
        clusterIn(w.namespace, { tidb: { replicas: 2, statefulSetUpdateStrategy: 'OnDelete', version } }),
        mode,
      );
      expect(onDelete.join('\n')).not.toMatch(/error/i);
      await w.waitFor(
        async () => (await w.sts('tidb'))?.spec.updateStrategy.type === 'OnDelete',
        20_000,
        'the controller to switch TiDB to OnDelete',
      );
      expect((await w.sts('tidb'))!.spec.updateStrategy).toEqual({ type: 'OnDelete' });
      // A new template under OnDelete restarts nothing.
      await new Promise((r) => setTimeout(r, 1500));
      expect(w.stops.length).toBe(stops);
      // Back to RollingUpdate: the partition comes with the type, so nothing rolls until the controller steps it.
      await w.applyCluster(clusterIn(w.namespace, { tidb: { replicas: 2, version } }), mode);
      await w.waitFor(async () => (await allSettled(w)) && stopsOf(w, 'tidb').length > 0, 60_000, 'TiDB to roll through the controller');
      expect(stopsOf(w, 'tidb').slice(-2)).toEqual(['c-tidb-1', 'c-tidb-0']);
      w.stops.length = 0;
    }
  });

  it('scales TiKV out, then in through Tombstone, keeping the claims of the removed Pod', async () => {
    const w = await running();
    await w.applyCluster(clusterIn(w.namespace, { tikv: { replicas: 4, requests: { storage: '1Gi' } } }));
    await w.waitFor(
      async () => (await w.settled('tikv', 4)) && w.pd.stores().filter((s) => s.state === 'Up').length === 4,
      60_000,
      'TiKV to scale out',
    );
    const store3 = w.pd.store('c-tikv-3')!.id;
    await w.applyCluster(clusterIn(w.namespace, { tikv: { replicas: 3, requests: { storage: '1Gi' } } }));
    await w.waitFor(async () => await w.settled('tikv', 3), 90_000, 'TiKV to scale in');
    expect(w.pd.stores().find((s) => s.id === store3)?.state).toBe('Tombstone');
    expect(w.pd.stopsWithLeaders).toEqual([]);
    const claim = (await w.pvcs('tikv')).find((c) => c.metadata.name === 'tikv-c-tikv-3')!;
    expect(claim.metadata.annotations['tidb.pingcap.com/pvc-defer-deleting']).toBeDefined();
    expect((await w.events('ScaleIn')).length).toBeGreaterThan(0);
  });

  it('replaces a failed PD member by its 64-bit id, its claim going before its Pod, then scales the extra replica in', async () => {
    const w = await running({ pd: { replicas: 3, requests: { storage: '1Gi' }, maxFailoverCount: 1 } });
    await w.controller().kill('SIGKILL');
    await w.controller().exited;
    await w.startController(['--pd-failover-period', '2s']);
    const failed = w.pd.members().find((m) => m.name === 'c-pd-1')!;
    expect(BigInt(failed.memberId) > BigInt(Number.MAX_SAFE_INTEGER)).toBe(true);
    const claimUid = (await w.pvcs('pd')).find((c) => c.metadata.name === 'pd-c-pd-1')!.metadata.uid;
    w.pd.pdStop('c-pd-1');
    await w.waitFor(async () => (await w.events('PDFailover')).length > 0, 30_000, 'the failover to begin');
    await w.waitFor(async () => (await w.sts('pd'))?.spec.replicas === 4, 60_000, 'the failover replica');
    expect(w.pd.members().some((m) => m.memberId === failed.memberId)).toBe(false);
    // The replacement c-pd-1 runs on a new claim.
    await w.waitFor(
      async () => (await w.pvcs('pd')).some((c) => c.metadata.name === 'pd-c-pd-1' && c.metadata.uid !== claimUid),
      60_000,
      'a fresh claim for c-pd-1',
    );
    await w.waitFor(
      async () => (await w.settled('pd', 3)) && w.pd.members().filter((m) => m.running).length === 3,
      120_000,
      'the extra replica to go again',
    );
    expect(w.pd.splitBrain).toEqual([]);
  });

  it('deletes an old config revision only once the rollout is done', async () => {
    const w = await running({ configUpdateStrategy: 'RollingUpdate' });
    const oldCm = (await w.sts('tidb'))!.spec.template.spec.volumes.find((v: Obj) => v.name === 'config').configMap.name;
    await w.applyCluster(
      clusterIn(w.namespace, { configUpdateStrategy: 'RollingUpdate', tidb: { replicas: 2, config: { log: { level: 'warn' } } } }),
    );
    const cmPath = resourcePath('v1', 'ConfigMap', w.namespace, oldCm);
    // Mid-rollout the old revision is still there.
    await w.waitFor(async () => stopsOf(w, 'tidb').length >= 1, 60_000, 'the TiDB rollout to begin');
    expect(await w.kube.get(cmPath)).toBeDefined();
    await w.waitFor(async () => (await w.kube.get(cmPath)) === undefined, 90_000, 'the old ConfigMap to be deleted');
    expect(await w.settled('tidb', 2)).toBe(true);
    expect((await w.events('ConfigMapDeleted')).map((e) => e.message)).toContainEqual(expect.stringContaining(oldCm));
  });

  it.each(['argo', 'flux'] as const)(
    'grows TiKV volumes from 10Gi to 20Gi from Git, %s-style: claims grown, StatefulSet re-created, no Pod restarted',
    async (tool) => {
      const ns = `real-${++seq}`;
      const storage = await expandableStorage(suite.cp().admin(), ns, { volumes: 3, size: '10Gi' });
      const tikv = (size: string) => ({ tikv: { replicas: 3, requests: { storage: size }, storageClassName: storage.className } });
      try {
        const w = await RealWorld.start({
          cp: suite.cp(),
          cluster: clusterIn(ns, tikv('10Gi')),
          render: suite.render,
          apply: tool === 'argo' ? 'client-side' : 'server-side',
        });
        world = w;
        await w.startController();
        await w.waitFor(() => allSettled(w), 90_000, 'the cluster to come up');
        await w.waitFor(async () => (await w.pvcs('tikv')).every((p) => p.status?.phase === 'Bound'), 30_000, 'the TiKV claims to bind');
        const uids = async () =>
          Object.fromEntries(
            (await Promise.all(['pd', 'tikv', 'tidb'].map((c) => w.pods(c)))).flat().map((p) => [p.metadata.name, p.metadata.uid]),
          );
        const podsBefore = await uids();
        const stsBefore = (await w.sts('tikv'))!;
        const stops = w.stops.length;

        w.objects = suite.render(clusterIn(ns, tikv('20Gi')));
        const sizes = w.objects.filter((o) => o.metadata.labels?.['tidb-gitops.io/volume-sizes'] === 'true');
        expect(sizes.map((o) => o.metadata.name)).toEqual(['c-volume-sizes']);
        if (tool === 'argo') {
          // Argo CD applies each object on its own: the StatefulSet is refused, the others land. kubectl
          // applies the volume sizes first, so on a busy machine the controller may have re-created the
          // StatefulSet with the new templates before kubectl reaches it; then nothing is refused.
          const refused = await w.apply(w.objects, 'client-side').then(
            () => undefined,
            (err: Error) => err,
          );
          if (refused) expect(refused.message).toMatch(claimTemplatesRefused());
          else expect((await w.sts('tikv'))!.metadata.uid).not.toBe(stsBefore.metadata.uid);
        } else {
          // Flux: the Kustomization holding the StatefulSets dry-runs every object and applies none
          // when one is refused; the volume sizes come with a Kustomization of their own.
          await expect(
            fluxDryRun(
              w,
              w.objects.filter((o) => !sizes.includes(o)),
            ),
          ).resolves.toMatch(claimTemplatesRefused());
          await w.apply(sizes, 'server-side');
        }

        await w.waitFor(
          async () => {
            const sts = await w.sts('tikv');
            return (
              sts !== undefined &&
              sts.metadata.uid !== stsBefore.metadata.uid &&
              sts.spec.volumeClaimTemplates[0].spec.resources.requests.storage === '20Gi'
            );
          },
          90_000,
          'the TiKV StatefulSet to be re-created with 20Gi claim templates',
        );
        const claims = await w.pvcs('tikv');
        expect(claims.map((p) => [p.metadata.name, p.spec.resources.requests.storage, p.status.capacity.storage])).toEqual(
          [0, 1, 2].map((i) => [`tikv-c-tikv-${i}`, '20Gi', '20Gi']),
        );
        expect([...storage.resized.keys()].sort()).toEqual([0, 1, 2].map((i) => `tikv-c-tikv-${i}`));
        const sts = (await w.sts('tikv'))!;
        expect([sts.spec.replicas, partitionOf(sts)]).toEqual([3, 3]);
        await w.waitFor(() => allSettled(w), 60_000, 'the cluster to settle again');
        expect(await uids()).toEqual(podsBefore);
        expect(w.stops.length).toBe(stops);
        for (const p of await w.pods('tikv')) expect(p.metadata.ownerReferences?.map((o: Obj) => o.uid)).toEqual([sts.metadata.uid]);
        expect((await w.events('VolumeResize')).length).toBeGreaterThan(0);
        expect(await w.events('VolumeTemplatesUpdated')).toHaveLength(1);
        expect(Object.keys((await w.kube.get(resourcePath('v1', 'ConfigMap', ns, 'c-status')))!.data)).toEqual(['status.json']);

        // The tool's next try goes through and changes nothing the controller owns.
        if (tool === 'argo') await w.apply(w.objects, 'client-side');
        else expect(await fluxDryRun(w, w.objects)).toBe('');
        if (tool === 'flux') await w.apply(w.objects, 'server-side');
        const after = (await w.sts('tikv'))!;
        expect(after.metadata.uid).toBe(sts.metadata.uid);
        expect([after.spec.replicas, partitionOf(after)]).toEqual([3, 3]);
        expect(
          ownersOf(after, [
            ['spec', 'replicas'],
            ['spec', 'updateStrategy', 'rollingUpdate', 'partition'],
          ]),
        ).toEqual({
          'spec.replicas': [CONTROLLER],
          'spec.updateStrategy.rollingUpdate.partition': [CONTROLLER],
        });
        expect(await uids()).toEqual(podsBefore);
      } finally {
        storage.stop();
      }
    },
  );

  it('refuses to grow claims whose StorageClass allows no expansion, in events, status and the health annotation', async () => {
    const ns = `real-${++seq}`;
    const storage = await expandableStorage(suite.cp().admin(), ns, { volumes: 3, size: '10Gi', expandable: false });
    const tikv = (size: string) => ({ tikv: { replicas: 3, requests: { storage: size }, storageClassName: storage.className } });
    try {
      const w = await RealWorld.start({ cp: suite.cp(), cluster: clusterIn(ns, tikv('10Gi')), render: suite.render, apply: 'server-side' });
      world = w;
      await w.startController();
      await w.waitFor(() => allSettled(w), 90_000, 'the cluster to come up');
      await w.waitFor(async () => (await w.pvcs('tikv')).every((p) => p.status?.phase === 'Bound'), 30_000, 'the TiKV claims to bind');
      const before = (await w.sts('tikv'))!;
      w.objects = suite.render(clusterIn(ns, tikv('20Gi')));
      await w.apply(
        w.objects.filter((o) => o.metadata.labels?.['tidb-gitops.io/volume-sizes'] === 'true'),
        'server-side',
      );
      await w.waitFor(async () => (await w.events('VolumeResizeRefused')).length > 0, 30_000, 'the refusal event');
      const [event] = await w.events('VolumeResizeRefused');
      expect(event.message).toMatch(
        /c-tikv: the API server refused to grow tikv-c-tikv-\d to 20Gi: .*only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize/,
      );
      await w.waitFor(
        async () => (await w.sts('tikv'))?.metadata.annotations?.['tidb-gitops.io/refused'] !== undefined,
        10_000,
        'the health annotation',
      );
      expect((await w.status())?.components.tikv.reason).toMatch(/^cannot grow the volumes: /);
      const after = (await w.sts('tikv'))!;
      expect(after.metadata.uid).toBe(before.metadata.uid);
      expect((await w.pvcs('tikv')).map((p) => p.spec.resources.requests.storage)).toEqual(['10Gi', '10Gi', '10Gi']);
    } finally {
      storage.stop();
    }
  });

  it("copies each Node's zone and host onto the TiKV stores and TiDB servers on it, reading Nodes through the rendered ClusterRole", async () => {
    const ns = `real-${++seq}`;
    const nodes = ['a', 'b', 'c'].map((z) => ({
      name: `${ns}-node-${z}`,
      labels: { 'topology.kubernetes.io/zone': `zone-${z}`, 'topology.kubernetes.io/region': 'r1' },
    }));
    const spec = {
      pd: { replicas: 3, requests: { storage: '1Gi' }, config: { replication: { 'location-labels': ['zone', 'host'] } } },
      tidb: { replicas: 2, serverLabels: { dc: 'dc1' } },
    };
    // PD's config file sets the location-labels at bootstrap; the simulator starts with them.
    const w = await RealWorld.start({
      cp: suite.cp(),
      cluster: clusterIn(ns, spec),
      render: suite.render,
      pd: { locationLabels: ['zone', 'host'] },
      kubelet: { nodes },
    });
    world = w;
    const reader = `tidb-gitops:${ns}:c-discovery`;
    expect(w.objects.filter((o) => o.kind.startsWith('Cluster')).map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      `ClusterRole/${reader}`,
      `ClusterRoleBinding/${reader}`,
    ]);
    await w.startController();
    await w.waitFor(() => allSettled(w), 90_000, 'the cluster to come up');

    const storeLabels = () =>
      [0, 1, 2].map((i) => Object.fromEntries((w.pd.store(`c-tikv-${i}`)?.labels ?? []).map((l) => [l.key, l.value])));
    const want = (i: number) => ({ zone: `zone-${'abc'[i]}`, host: `${ns}-node-${'abc'[i]}` });
    await w.waitFor(
      () => JSON.stringify(storeLabels()) === JSON.stringify([0, 1, 2].map(want)),
      60_000,
      "the stores to carry their Node's zone and host",
    );
    await w.waitFor(
      () => [0, 1].every((i) => w.tidb.labels(`c-tidb-${i}`)?.zone !== undefined),
      60_000,
      'the TiDB servers to carry their labels',
    );
    expect([0, 1].map((i) => w.tidb.labels(`c-tidb-${i}`))).toEqual([0, 1].map((i) => ({ dc: 'dc1', ...want(i) })));
    // The status shows PD's store labels as read at the start of a pass: the pass after the one that set them.
    await w.waitFor(
      async () => {
        const s = await w.status();
        // In PD's order, which is not the ordinals' (a store registering late comes where PD puts it).
        const byPod = [...(s?.components.tikv.stores ?? [])].sort((a: Obj, b: Obj) => String(a.pod).localeCompare(String(b.pod)));
        return (
          s?.topology?.servers?.['c-tidb-1'] !== undefined &&
          JSON.stringify(byPod.map((st: Obj) => st.labels)) === JSON.stringify([0, 1, 2].map(want))
        );
      },
      60_000,
      'the status to show the store and server labels',
    );
    expect((await w.status())!.topology).toEqual({
      locationLabels: ['zone', 'host'],
      servers: { 'c-tidb-0': { dc: 'dc1', ...want(0) }, 'c-tidb-1': { dc: 'dc1', ...want(1) } },
      problem: null,
    });

    // A restarted TiDB starts from its config file's labels: the controller sets them again, once.
    const posts = () => w.tidb.requests.filter((r) => r.method === 'POST' && r.pod === 'c-tidb-1').length;
    expect(posts()).toBe(1);
    const before = (await w.pods('tidb'))[1].metadata.uid;
    await w.kube.delete(resourcePath('v1', 'Pod', ns, 'c-tidb-1'));
    await w.waitFor(
      async () => (await w.pods('tidb'))[1]?.metadata.uid !== before && (await w.settled('tidb', 2)),
      60_000,
      'the TiDB Pod to come back',
    );
    await w.waitFor(() => w.tidb.labels('c-tidb-1')?.zone === 'zone-b', 30_000, 'the labels on the restarted TiDB');
    await new Promise((r) => setTimeout(r, 1500));
    expect(posts()).toBe(2);
    // Stores are labelled once: PD keeps their labels.
    expect(w.pd.requests.filter((r) => r.method === 'POST' && /\/store\/\d+\/label$/.test(r.path))).toHaveLength(3);
  });

  it('renders no ClusterRole for a cluster without topology labels, and its controller reads no Node', async () => {
    const w = await running();
    expect(w.objects.filter((o) => o.kind.startsWith('Cluster'))).toEqual([]);
    const user = `system:serviceaccount:${w.namespace}:c-discovery`;
    expect(
      suite
        .cp()
        .audit()
        .filter((r) => r.user === user && /\/api\/v1\/nodes/.test(r.uri ?? '')),
    ).toEqual([]);
    expect((await w.status())?.topology).toBeUndefined();
  });

  it('resumes after the controller is killed in the middle of a step', async () => {
    const w = await running();
    await w.applyCluster(clusterIn(w.namespace, upgraded()));
    await w.waitFor(() => stopsOf(w, 'tikv').length >= 1, 90_000, 'the TiKV step to begin');
    w.controller().kill('SIGKILL');
    await w.controller().exited;
    await w.startController();
    await w.waitFor(
      async () => (await allSettled(w)) && stopsOf(w, 'tidb').length === 2,
      120_000,
      'the upgrade to finish after the restart',
    );
    expect(stopsOf(w, 'tikv')).toEqual(['c-tikv-2', 'c-tikv-1', 'c-tikv-0']);
    expect(w.pd.stopsWithLeaders).toEqual([]);
  });

  it('scales nothing in while the node is lost and every Pod is marked not Ready, and says why', async () => {
    const w = await running();
    w.kubelet.pause();
    // The node-lifecycle controller marks the node and its Pods not Ready after the grace period (10 s here).
    await w.waitFor(
      async () => (await w.pods('tidb')).every((p) => p.status.conditions.find((c: Obj) => c.type === 'Ready')?.status === 'False'),
      60_000,
      'the Pods to be marked not Ready',
    );
    await w.applyCluster(clusterIn(w.namespace, { tidb: { replicas: 1 } }));
    await w.waitFor(
      async () => /scale-in waits: Pod c-tidb-0 is not Ready/.test((await w.status())?.components.tidb?.reason ?? ''),
      20_000,
      'the status to say why TiDB waits',
    );
    expect((await w.sts('tidb'))!.spec.replicas).toBe(2);
    await w.kubelet.resume();
    await w.waitFor(() => w.settled('tidb', 1), 60_000, 'the scale-in once the node is back');
  });
});

describeReal('a lost node on a real API server', () => {
  it('replaces the TiKV Git names after its node is gone: store offline to Tombstone, Pod force-deleted, a fresh claim and store on another node; nothing else restarts', async () => {
    const ns = `real-${++seq}`;
    const nodes = ['a', 'b', 'c', 'd'].map((x) => ({ name: `${ns}-${x}` }));
    const lost = nodes[1].name;
    const spec = { tikv: { replicas: 4, requests: { storage: '1Gi' } } };
    const w = await RealWorld.start({ cp: suite.cp(), cluster: clusterIn(ns, spec), render: suite.render, kubelet: { nodes } });
    world = w;
    await w.startController(['--tikv-failover-period', '10m', '--pd-failover-period', '10m', '--tidb-failover-period', '10m']);
    await w.waitFor(
      async () => (await w.settled('pd', 3)) && (await w.settled('tikv', 4)) && (await w.settled('tidb', 2)),
      90_000,
      'the cluster to come up',
    );
    const uids = async () =>
      Object.fromEntries(
        [...(await w.pods('pd')), ...(await w.pods('tikv')), ...(await w.pods('tidb'))].map((p) => [p.metadata.name, p.metadata.uid]),
      );
    const before = await uids();
    const claims = Object.fromEntries((await w.pvcs('tikv')).map((c) => [c.metadata.name, c.metadata.uid]));
    const oldStore = w.pd.store('c-tikv-1')!.id;
    const otherStores = ['c-tikv-0', 'c-tikv-2', 'c-tikv-3'].map((p) => w.pd.store(p)!.id);
    // The second node dies with c-pd-1, c-tikv-1 and c-tidb-1 on it: heartbeats stop, and its servers with them.
    expect(w.kubelet.stopNode(lost).sort()).toEqual(['c-pd-1', 'c-tidb-1', 'c-tikv-1']);
    await w.waitFor(
      async () =>
        (await w.kube.get(`/api/v1/nodes/${lost}`))?.status?.conditions?.find((c: Obj) => c.type === 'Ready')?.status === 'Unknown',
      60_000,
      'the node-lifecycle controller to mark the node',
    );
    await w.waitFor(() => w.pd.store('c-tikv-1')?.state === 'Down', 30_000, 'the store to be Down');

    await w.applyCluster(simCluster(spec, { namespace: w.namespace, annotations: { 'tidb-gitops.io/replace': 'c-tikv-1' } }));
    await w.waitFor(async () => (await w.status())?.replacements?.['c-tikv-1']?.phase === 'done', 120_000, 'the replacement to be done');
    const fresh = w.pd.store('c-tikv-1')!;
    expect([fresh.state, fresh.id === oldStore]).toEqual(['Up', false]);
    expect(w.pd.stores().find((s) => s.id === oldStore)?.state ?? 'Tombstone').toBe('Tombstone');
    const pod = (await w.pods('tikv')).find((p) => p.metadata.name === 'c-tikv-1')!;
    expect(pod.spec.nodeName).not.toBe(lost);
    expect((await w.pvcs('tikv')).find((c) => c.metadata.name === 'tikv-c-tikv-1')!.metadata.uid).not.toBe(claims['tikv-c-tikv-1']);
    // The other stores and claims are untouched, and no Pod but c-tikv-1 was replaced (those on the lost node stay there, lost).
    expect(['c-tikv-0', 'c-tikv-2', 'c-tikv-3'].map((p) => w.pd.store(p)!.id)).toEqual(otherStores);
    for (const name of ['tikv-c-tikv-0', 'tikv-c-tikv-2', 'tikv-c-tikv-3'])
      expect((await w.pvcs('tikv')).find((c) => c.metadata.name === name)!.metadata.uid).toBe(claims[name]);
    const after = await uids();
    expect(Object.keys(before).filter((n) => after[n] !== before[n])).toEqual(['c-tikv-1']);
    await w.waitFor(
      async () => (await w.events('MemberReplaced')).length > 0,
      10_000,
      'the MemberReplaced event, which follows the record',
    );
    expect((await w.events('MemberReplaced')).map((e) => e.involvedObject.name)).toEqual(['c-tikv-1']);
  });

  it('fails a PD member over when its node is gone: its Pod, which no kubelet will confirm, is deleted at once and comes back on another node', async () => {
    const ns = `real-${++seq}`;
    const nodes = ['a', 'b', 'c'].map((x) => ({ name: `${ns}-${x}` }));
    const spec = { pd: { replicas: 3, requests: { storage: '1Gi' }, maxFailoverCount: 1 } };
    const w = await RealWorld.start({ cp: suite.cp(), cluster: clusterIn(ns, spec), render: suite.render, kubelet: { nodes } });
    world = w;
    await w.startController(['--pd-failover-period', '2s', '--tikv-failover-period', '10m', '--tidb-failover-period', '10m']);
    await w.waitFor(() => allSettled(w), 90_000, 'the cluster to come up');
    const failed = w.pd.members().find((m) => m.name === 'c-pd-1')!.memberId;
    const podUid = (await w.pods('pd')).find((p) => p.metadata.name === 'c-pd-1')!.metadata.uid;
    expect(w.kubelet.stopNode(nodes[1].name).sort()).toEqual(['c-pd-1', 'c-tidb-1', 'c-tikv-1']);
    await w.waitFor(async () => (await w.events('PDFailover')).length > 0, 60_000, 'the failover to begin');
    // The failed Pod goes although its kubelet is gone, and c-pd-1 starts again elsewhere, as a new member.
    await w.waitFor(
      async () =>
        (await w.pods('pd')).some((p) => p.metadata.name === 'c-pd-1' && p.metadata.uid !== podUid && p.spec.nodeName !== nodes[1].name),
      60_000,
      'c-pd-1 on another node',
    );
    await w.waitFor(
      () => w.pd.members().some((m) => m.name === 'c-pd-1' && m.memberId !== failed && m.running),
      60_000,
      'a new member c-pd-1',
    );
    expect(w.pd.members().some((m) => m.memberId === failed)).toBe(false);
    expect(w.pd.splitBrain).toEqual([]);
  });
});

describeReal('the Kubernetes simulator (test/sim) answers StatefulSet writes as this API server does', () => {
  let sim: KubeSim;
  const minor = () => Number(suite.cp().kubeVersion.split('.')[1]);
  beforeAll(async () => {
    sim = await KubeSim.start({ kubeMinor: minor() });
  });
  afterAll(() => sim.close());

  const ns = `sim-contract-${process.pid}`;
  /** A StatefulSet whose updateStrategy (and any other spec field) the case sets. */
  const sts = (name: string, spec: Obj = {}): Obj => ({
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, namespace: ns },
    spec: {
      serviceName: name,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'img' }] } },
      volumeClaimTemplates: [
        { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
      ],
      ...spec,
    },
  });
  /** The answer of each server to one request: its status, and the stored spec or the refusal's message. */
  async function both(method: string, path: string, body: unknown, contentType = 'application/json') {
    const real = await suite.cp().admin().request(method, path, { body, contentType });
    const fake = await fetch(`${sim.url}${path}`, { method, headers: { 'content-type': contentType }, body: JSON.stringify(body) });
    const simBody = (await fake.json()) as Obj;
    const view = (status: number, o: Obj) =>
      status < 300
        ? {
            status,
            spec: {
              ...o.spec,
              template: o.spec.template.metadata,
              volumeClaimTemplates: o.spec.volumeClaimTemplates?.map((t: Obj) => t.metadata),
            },
          }
        : { status, message: o.message };
    return { real: view(real.status, real.body), sim: view(fake.status, simBody) };
  }

  it('creates with the same defaults, and refuses the same updates with the same words', async () => {
    await suite
      .cp()
      .admin()
      .create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await fetch(`${sim.url}/api/v1/namespaces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }),
    });
    const path = `/apis/apps/v1/namespaces/${ns}/statefulsets`;
    const cases: Record<string, Obj> = {
      a: { updateStrategy: { type: 'RollingUpdate' } },
      b: { updateStrategy: {} },
      c: {},
      d: { updateStrategy: { type: 'OnDelete' } },
      e: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: {} } },
      f: {
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2 } },
        persistentVolumeClaimRetentionPolicy: { whenScaled: 'Delete' },
      },
    };
    for (const [name, spec] of Object.entries(cases)) {
      const { real, sim: fake } = await both('POST', path, sts(name, spec));
      expect({ name, ...fake }).toEqual({ name, ...real });
    }
    // An update of the claim templates, and one of minReadySeconds (forbidden before 1.37, allowed after).
    const grown = sts('c');
    grown.spec.volumeClaimTemplates[0].spec.resources.requests.storage = '2Gi';
    const refused = await both('PUT', `${path}/c`, grown);
    expect(refused.real.status).toBe(422);
    // The server prints the refused value in Go's notation, the simulator as JSON: the words before it agree.
    const words = (m: string) => m.replace(/Invalid value: .*: field is immutable/, 'Invalid value: …: field is immutable');
    expect(words(refused.sim.message)).toBe(words(refused.real.message));
    const slower = await both('PUT', `${path}/d`, sts('d', { ...cases.d, minReadySeconds: 5 }));
    expect(slower.sim.status).toBe(slower.real.status);
  });

  it('lets the controller switch a set created by kubectl to OnDelete and back', async () => {
    const path = `/apis/apps/v1/namespaces/${ns}/statefulsets/c`;
    const apply = (partition?: number) => ({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'c', namespace: ns },
      spec: {
        replicas: 0,
        updateStrategy: partition === undefined ? { type: 'OnDelete' } : { type: 'RollingUpdate', rollingUpdate: { partition } },
      },
    });
    const q = '?fieldManager=tidb-gitops&force=true';
    // Server-side apply alone cannot drop a rollingUpdate the creator owns: both refuse it the same way...
    const applied = await both('PATCH', `${path}${q}`, apply(), 'application/apply-patch+yaml');
    expect(applied.sim).toEqual(applied.real);
    // ...which is why the controller switches with a merge patch that removes it (src/controller/clients/kube.ts).
    const merged = await both(
      'PATCH',
      `${path}?fieldManager=tidb-gitops`,
      { spec: { replicas: 0, updateStrategy: { type: 'OnDelete', rollingUpdate: null } } },
      'application/merge-patch+json',
    );
    expect(merged.real).toMatchObject({ status: 200, spec: { updateStrategy: { type: 'OnDelete' } } });
    expect(merged.sim).toEqual(merged.real);
    const back = await both('PATCH', `${path}${q}`, apply(0), 'application/apply-patch+yaml');
    expect(back.sim).toEqual(back.real);
  });
});
