/**
 * GitOps-safe rollouts, end to end: a GitOps tool (Argo CD style: client-side apply; Flux style: forced
 * server-side apply) syncs the rendered manifests with pruning on, the real controller runs the
 * rollout. With `configUpdateStrategy: RollingUpdate` a config change renders a new ConfigMap name;
 * the old one must outlive its removal from Git for as long as a Pod or the StatefulSet's current
 * revision uses it, and then go. Re-syncing in the middle of the rollout must not touch the replicas
 * and partition the controller set. Needs the bundle (`npm run build`).
 */
import { FLUX_MANAGER, GitOpsTool, type SyncStyle } from '../support/gitops';
import { worldViolations } from '../support/rbac';
import { render } from '../support/render';
import { World, simCluster } from '../sim/world';
import type { KubeObject } from '../sim/kube-api';

jest.setTimeout(90_000);

type Obj = Record<string, any>;
const CONTROLLER = 'tidb-gitops-controller';
const spec = { configUpdateStrategy: 'RollingUpdate' };
const changed = { ...spec, tidb: { replicas: 2, config: { log: { level: 'warn' } } } };

let world: World | undefined;
afterEach(async () => {
  const w = world;
  world = undefined;
  if (!w) return;
  try {
    expect(worldViolations(w)).toEqual([]);
  } finally {
    await w.close();
  }
});

const configOf = (sts: Obj): string => sts.spec.template.spec.volumes.find((v: Obj) => v.name === 'config').configMap.name;
/**
 * Object creation times have whole seconds, so a revision made in the same second as the one before
 * could be either one's successor: the controller keeps such a pair for the grace period. Changes a
 * person pushes come seconds apart; the test waits for the next second to be like them.
 */
const nextSecond = () => new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 10));
const mounts = (pod: Obj): string[] => (pod.spec.volumes ?? []).flatMap((v: Obj) => (v.configMap?.name ? [v.configMap.name] : []));

describe.each<SyncStyle>(['argocd', 'flux'])('%s sync of a config change with configUpdateStrategy RollingUpdate', (style) => {
  it('keeps the old ConfigMap while anything uses it, deletes it after the rollout, and never fights over replicas or partition', async () => {
    const tool = new GitOpsTool(style);
    const w = await World.start({ cluster: simCluster(spec), render, apply: (kube, objects) => tool.sync(kube, objects) });
    world = w;
    await w.startController();
    await w.waitFor(() => w.settled('pd', 3) && w.settled('tikv', 3) && w.settled('tidb', 2), 30_000, 'the cluster to come up');
    const before = { pd: configOf(w.sts('pd')), tikv: configOf(w.sts('tikv')), tidb: configOf(w.sts('tidb')) };
    expect(before.tidb).toMatch(/^c-tidb-[0-9a-f]{1,8}$/);

    // Every ConfigMap deletion is checked as it happens: no Pod mounts it, and no StatefulSet still
    // rolls (a Pod re-created from the current revision would mount it).
    const deleted: string[] = [];
    const unsafe: string[] = [];
    w.kube.onDeleted('ConfigMap', (cm) => {
      const name = cm.metadata.name;
      deleted.push(name);
      for (const p of w.kube.list('Pod', 'ns'))
        if (mounts(p).includes(name)) unsafe.push(`${name} deleted while ${p.metadata.name} mounts it`);
      for (const s of w.kube.list('StatefulSet', 'ns')) {
        if (s.status?.currentRevision !== s.status?.updateRevision) unsafe.push(`${name} deleted while ${s.metadata.name} rolls`);
      }
    });

    await nextSecond();
    await w.applyCluster(simCluster(changed));
    const after = configOf(w.sts('tidb'));
    expect(after).not.toBe(before.tidb);
    expect(tool.kept).toEqual([`ConfigMap/ns/${before.tidb}`]);
    expect(tool.pruned).toEqual([]);

    // Mid-rollout: the controller has stepped the partition down.
    await w.waitFor(() => (w.sts('tidb').spec.updateStrategy.rollingUpdate.partition ?? 2) < 2, 20_000, 'the TiDB rollout to start');
    const oldPod = w.kube.get('Pod', 'ns', 'c-tidb-0')!;
    expect(mounts(oldPod)).toContain(before.tidb);

    // Re-sync the same revision right now (in-process, so nothing runs in between) and compare.
    const fields = () =>
      w.kube.list('StatefulSet', 'ns').map((s) => [s.metadata.name, s.spec.replicas, s.spec.updateStrategy?.rollingUpdate?.partition]);
    const set = fields();
    tool.sync(w.kube, render(simCluster(changed)));
    expect(fields()).toEqual(set);
    // The controller owns both fields. Flux's apply never owns them. A client-side create owned
    // their defaults and shares them where the controller set the same value; its later applies
    // leave them alone all the same, as they are not in its last-applied manifest.
    for (const name of ['c-pd', 'c-tikv', 'c-tidb']) {
      const owners = w.kube.fieldOwners('StatefulSet', 'ns', name);
      for (const f of ['.spec.replicas', '.spec.updateStrategy.rollingUpdate.partition']) {
        const who = Object.keys(owners).filter((m) => owners[m].includes(f));
        expect({ name, f, controller: who.includes(CONTROLLER), flux: who.includes(FLUX_MANAGER) }).toEqual({
          name,
          f,
          controller: true,
          flux: false,
        });
      }
    }

    // A Pod of the old revision that fails mid-rollout comes back from that revision: it needs the
    // old ConfigMap, which is still there.
    w.kube.delete('Pod', 'ns', 'c-tidb-0');
    await w.waitFor(
      () => {
        const p = w.kube.get('Pod', 'ns', 'c-tidb-0');
        return p !== undefined && p.metadata.uid !== oldPod.metadata.uid;
      },
      10_000,
      'c-tidb-0 to be re-created',
    );

    // The event follows the deletion.
    await w.waitFor(
      () => w.settled('tidb', 2) && !w.kube.get('ConfigMap', 'ns', before.tidb) && w.events('ConfigMapDeleted').length > 0,
      30_000,
      'the rollout to finish and the old ConfigMap to go',
    );
    expect(deleted).toEqual([before.tidb]);
    expect(unsafe).toEqual([]);
    expect(w.kube.mountFailures).toEqual([]);
    expect(w.events('ConfigMapDeleted').map((e: KubeObject) => e.message)).toEqual([
      `Deleted ConfigMap ${before.tidb}: no Pod, StatefulSet revision or current spec uses it`,
    ]);
    for (const p of w.pods('tidb')) expect(mounts(p)).toContain(after);
    for (const c of ['pd', 'tikv'] as const) {
      expect(configOf(w.sts(c))).toBe(before[c]);
      expect(w.kube.get('ConfigMap', 'ns', before[c])).toBeDefined();
    }
    const metrics = await w.controller().get('/metrics');
    expect(metrics.body).toContain('tidb_gitops_configmaps_deleted_total{component="tidb"} 1');
  });
});

describe('a revision Git is still bringing in', () => {
  it('is not deleted: an unused ConfigMap newer than the one in use is kept for the grace period', async () => {
    const tool = new GitOpsTool('argocd');
    const w = await World.start({ cluster: simCluster(spec), render, apply: (kube, objects) => tool.sync(kube, objects) });
    world = w;
    await w.startController();
    await w.waitFor(() => w.settled('pd', 3) && w.settled('tikv', 3) && w.settled('tidb', 2), 30_000, 'the cluster to come up');
    // Only the new ConfigMap arrives (its StatefulSet is still on its way); then an unrelated
    // rollout makes the controller look at config revisions again.
    const next = render(simCluster(changed)).find((o) => o.kind === 'ConfigMap' && /^c-tidb-[0-9a-f]{1,8}$/.test(o.metadata.name))!;
    expect(w.kube.get('ConfigMap', 'ns', next.metadata.name)).toBeUndefined();
    await nextSecond();
    w.kube.apply(next as KubeObject);
    await w.applyCluster(simCluster({ ...spec, pd: { replicas: 3, requests: { storage: '1Gi' }, config: { log: { level: 'warn' } } } }));
    await w.waitFor(
      () => w.events('ConfigMapDeleted').length === 1 && w.settled('pd', 3),
      30_000,
      'the PD rollout and its old ConfigMap to go',
    );
    expect(w.kube.get('ConfigMap', 'ns', next.metadata.name)).toBeDefined();
  });
});
