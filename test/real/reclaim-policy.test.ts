/**
 * `spec.pvReclaimPolicy` on a real API server and controller manager (test/kube/): the shipped
 * controller, authenticated with the rendered ServiceAccount's token, sets the reclaim policy of the
 * PersistentVolumes bound to its cluster's claims through the ClusterRole that
 * `tidb-gitops.io/pv-reclaim-policy: "true"` renders, and leaves every other PV alone; without the
 * ClusterRole, the real RBAC authorizer refuses it and the status and a Warning Event say so.
 */
import { resourcePath, type Obj } from '../kube/client';
import { realApiSuite } from '../kube/suite';
import { RealWorld } from '../kube/world';
import { expandableStorage, type Storage } from '../kube/resizer';
import { simCluster } from '../sim/controller-process';

const suite = realApiSuite();
const { describeReal } = suite;

jest.setTimeout(240_000);

let world: RealWorld | undefined;
let storage: Storage | undefined;
let seq = 0;

afterEach(async () => {
  const w = world;
  world = undefined;
  storage?.stop();
  storage = undefined;
  if (w) await w.close();
});

const ON = { annotations: { 'tidb-gitops.io/pv-reclaim-policy': 'true' } };

/** One PD, one TiKV and one TiDB whose claims bind to the storage's static PVs, all set to Delete first. */
async function setUp(ns: string, volumes: number): Promise<{ spec: Obj; pv: (i: number) => Promise<Obj | undefined> }> {
  const admin = suite.cp().admin();
  storage = await expandableStorage(admin, ns, { volumes, size: '1Gi' });
  const path = (i: number) => resourcePath('v1', 'PersistentVolume', undefined, `${storage!.className}-${i}`);
  for (let i = 0; i < volumes; i++) await admin.patch(path(i), 'merge', { spec: { persistentVolumeReclaimPolicy: 'Delete' } });
  const claim = { requests: { storage: '1Gi' }, storageClassName: storage.className };
  return { spec: { pd: { replicas: 1, ...claim }, tikv: { replicas: 1, ...claim }, tidb: { replicas: 1 } }, pv: (i) => admin.get(path(i)) };
}

const boundPvs = async (w: RealWorld): Promise<string[]> =>
  (await Promise.all(['pd', 'tikv'].map((c) => w.pvcs(c))))
    .flat()
    .map((p) => p.spec?.volumeName)
    .filter((v): v is string => typeof v === 'string');

describeReal('spec.pvReclaimPolicy on a real API server', () => {
  it("sets Retain on the PVs bound to the cluster's claims, through the rendered ClusterRole, and on no other PV", async () => {
    const ns = `reclaim-${++seq}`;
    const { spec, pv } = await setUp(ns, 3);
    const w = await RealWorld.start({ cp: suite.cp(), cluster: simCluster(spec, { namespace: ns, ...ON }), render: suite.render });
    world = w;
    const role = w.objects.find((o) => o.kind === 'ClusterRole');
    expect(role?.rules).toEqual([{ apiGroups: [''], resources: ['persistentvolumes'], verbs: ['get', 'patch'] }]);
    await w.startController();
    await w.waitFor(async () => (await boundPvs(w)).length === 2, 90_000, 'the PD and TiKV claims to bind');
    const bound = await boundPvs(w);
    await w.waitFor(
      async () => (await Promise.all([0, 1, 2].map(pv))).filter((v) => v?.spec?.persistentVolumeReclaimPolicy === 'Retain').length === 2,
      60_000,
      'the bound PVs to be Retain',
    );
    const all = await Promise.all([0, 1, 2].map(pv));
    for (const v of all) expect(v!.spec.persistentVolumeReclaimPolicy).toBe(bound.includes(v!.metadata.name) ? 'Retain' : 'Delete');
    await w.waitFor(async () => (await w.status())?.volumes?.problem === null, 30_000, 'the status to show the policy');
    expect(Object.values((await w.status())!.volumes.volumes)).toEqual(['Retain', 'Retain']);
    expect(w.forbidden()).toEqual([]);
    expect(w.violations).toEqual([]);
  });

  it('without the ClusterRole: nothing patched, the status and a Warning Event say what to grant', async () => {
    const ns = `reclaim-${++seq}`;
    const { spec, pv } = await setUp(ns, 2);
    const w = await RealWorld.start({
      cp: suite.cp(),
      cluster: simCluster(spec, { namespace: ns, ...ON }),
      render: suite.render,
      applyAtStart: false,
    });
    world = w;
    // An Argo CD project that does not allow cluster-scoped kinds: the ClusterRole and its binding never land.
    w.objects = w.objects.filter((o) => !o.kind.startsWith('ClusterRole'));
    await w.apply(w.objects);
    await w.startController();
    await w.waitFor(
      async () =>
        /^pvReclaimPolicy is not applied: the controller may not get or patch PersistentVolumes/.test(
          (await w.status())?.volumes?.problem ?? '',
        ),
      90_000,
      'the status to say the policy is not applied',
    );
    expect((await w.status())!.volumes.problem).toContain(
      `grant it with the annotation tidb-gitops.io/pv-reclaim-policy: "true" on the TidbCluster, and apply the ClusterRole and ClusterRoleBinding tidb-gitops:${ns}:c-discovery`,
    );
    await w.waitFor(async () => (await w.events('ReclaimPolicyNotApplied')).length > 0, 30_000, 'the Warning Event');
    expect((await w.events('ReclaimPolicyNotApplied'))[0]).toMatchObject({
      type: 'Warning',
      involvedObject: { kind: 'StatefulSet', name: 'c-pd' },
    });
    for (const i of [0, 1]) expect((await pv(i))!.spec.persistentVolumeReclaimPolicy).toBe('Delete');
  });
});
