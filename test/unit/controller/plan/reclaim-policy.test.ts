/**
 * `spec.pvReclaimPolicy`: refused unless Retain or Delete; with `tidb-gitops.io/pv-reclaim-policy:
 * "true"` a ClusterRole (get and patch on persistentvolumes, nothing else) lets the controller set it
 * on the PVs bound to the cluster's claims, as tidb-operator's reclaim policy manager does, and only
 * those; without the grant, the status and one Warning Event say so.
 */
import { controllerClusterInfo } from '../../../../src/render/discovery';
import { resolveCluster } from '../../../../src/tidbcluster/resolve';
import { parseClusterInfo } from '../../../../src/controller/model/cluster';
import { KubeError } from '../../../../src/controller/clients/kube-errors';
import { boundClaims, reclaimPolicyPatches, reclaimPolicyOf } from '../../../../src/controller/plan/reclaim-policy';
import { ReclaimPolicySetter } from '../../../../src/controller/reconcile/reclaim-policy';
import type { PersistentVolume, Pvc } from '../../../../src/controller/model/objects';
import { buildModel, compareModels, RISK, type KubeObject } from '../../../../src/diff';
import { cluster, find, render, renderErrors, type Obj } from '../../../support/render';
import { rbacViolations, type ApiRequestLike, type RbacRole } from '../../../support/rbac';

const ON = { annotations: { 'tidb-gitops.io/pv-reclaim-policy': 'true' } };
const TIKV = { tikv: { replicas: 3, requests: { storage: '1Gi' } } };
const clusterScoped = (objects: Obj[]) => objects.filter((o) => o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding');

const claim = (name: string, component: string, volume?: string, uid = `uid-${name}`): Pvc => ({
  metadata: { name, uid, labels: { 'app.kubernetes.io/component': component, 'app.kubernetes.io/instance': 'demo' } },
  spec: { ...(volume && { volumeName: volume }) },
});
const pv = (name: string, policy: string, ref: { namespace?: string; name?: string; uid?: string }): PersistentVolume => ({
  metadata: { name },
  spec: { persistentVolumeReclaimPolicy: policy, claimRef: ref },
});

describe('the input', () => {
  test.each([
    ['retain', '; did you mean Retain?'],
    ['delete', '; did you mean Delete?'],
    ['Recycle', ''],
  ])('fails with pvReclaimPolicy %s, at its path', (value, hint) => {
    expect(renderErrors(cluster({ ...TIKV, pvReclaimPolicy: value }))).toContain(
      `spec.pvReclaimPolicy (line 18): expected Retain or Delete, got "${value}"${hint}`,
    );
  });

  test('takes Retain and Delete', () => {
    for (const value of ['Retain', 'Delete']) expect(() => render(cluster({ ...TIKV, pvReclaimPolicy: value }))).not.toThrow();
  });

  test('fails with an annotation other than "true" or "false", and without a namespace for the binding', () => {
    expect(renderErrors(cluster(TIKV, { annotations: { 'tidb-gitops.io/pv-reclaim-policy': 'yes' } }))).toMatch(
      /metadata\.annotations\["tidb-gitops\.io\/pv-reclaim-policy"\] \(line \d+\): expected "true" or "false", got "yes"/,
    );
    expect(renderErrors(cluster(TIKV, { ...ON, namespace: undefined }))).toMatch(
      /metadata\.namespace \(line \d+\): required with tidb-gitops\.io\/pv-reclaim-policy: "true": the controller patches PersistentVolumes through a ClusterRoleBinding/,
    );
  });
});

describe('rendering', () => {
  test('no ClusterRole and no flag by default', () => {
    const objects = render(cluster(TIKV));
    expect(clusterScoped(objects)).toEqual([]);
    expect(
      parseClusterInfo(JSON.stringify(controllerClusterInfo(resolveCluster(cluster(TIKV) as never))), 'ns').patchesVolumes,
    ).toBeUndefined();
  });

  test('with the annotation: get and patch on persistentvolumes, nothing else, bound to the controller', () => {
    const objects = render(cluster(TIKV, ON));
    const [role, binding] = clusterScoped(objects);
    expect(role.rules).toEqual([{ apiGroups: [''], resources: ['persistentvolumes'], verbs: ['get', 'patch'] }]);
    expect(binding).toMatchObject({
      subjects: [{ kind: 'ServiceAccount', name: 'demo-discovery', namespace: 'ns' }],
      roleRef: { kind: 'ClusterRole', name: 'tidb-gitops:ns:demo-discovery' },
    });
    const info = controllerClusterInfo(resolveCluster(cluster(TIKV, ON) as never));
    expect(parseClusterInfo(JSON.stringify(info), 'ns').patchesVolumes).toBe(true);
    expect(find(objects, 'Role', 'demo-discovery').rules).toEqual(find(render(cluster(TIKV)), 'Role', 'demo-discovery').rules);
  });

  test('with topology labels too: one ClusterRole with both rules', () => {
    const spec = { ...TIKV, tikv: { ...TIKV.tikv, storeLabels: ['zone'] } };
    expect(clusterScoped(render(cluster(spec, ON)))[0].rules).toEqual([
      { apiGroups: [''], resources: ['nodes'], verbs: ['get'] },
      { apiGroups: [''], resources: ['persistentvolumes'], verbs: ['get', 'patch'] },
    ]);
  });

  test('the rendered roles grant every request the controller makes for it, and nothing without the annotation', () => {
    const requests: ApiRequestLike[] = [
      { method: 'GET', path: '/api/v1/persistentvolumes/pvc-1', query: {} },
      { method: 'PATCH', path: '/api/v1/persistentvolumes/pvc-1', query: { fieldManager: 'tidb-gitops-controller' } },
    ];
    const roles = (objects: Obj[]) => objects.filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role') as RbacRole[];
    expect(rbacViolations(roles(render(cluster(TIKV, ON))), requests)).toEqual([]);
    expect(rbacViolations(roles(render(cluster(TIKV))), requests)).toHaveLength(2);
    // No list or watch: PVs are read one by one, by their claims' volumeName.
    expect(
      rbacViolations(roles(render(cluster(TIKV, ON))), [{ method: 'GET', path: '/api/v1/persistentvolumes', query: {} }]),
    ).toHaveLength(1);
  });
});

describe('the diff report', () => {
  const model = (metadata: Obj) => buildModel(render(cluster(TIKV, metadata)) as KubeObject[]);

  test('the ClusterRole coming and going is a node-access risk that names PersistentVolumes', () => {
    const added = compareModels(model({}), model(ON)).clusters[0].risks.filter((r) => r.id === RISK.nodeAccess);
    expect(added).toHaveLength(1);
    expect(added[0].message).toMatch(
      /^The companion controller gets, through ClusterRole tidb-gitops:ns:demo-discovery, get and patch on PersistentVolumes to set spec\.pvReclaimPolicy on those bound to the cluster's claims/,
    );
    expect(compareModels(model(ON), model({})).clusters[0].risks.find((r) => r.id === RISK.nodeAccess)?.message).toMatch(
      /loses access to PersistentVolumes \(ClusterRole tidb-gitops:ns:demo-discovery is deleted\): it stops setting the PVs' reclaim policy/,
    );
  });
});

describe('the planner', () => {
  test('bound claims of PD, TiKV, TiDB, TiFlash and Pump only, as the operator', () => {
    const claims = [
      claim('tikv-demo-tikv-0', 'tikv', 'pv-a'),
      claim('pd-demo-pd-0', 'pd', 'pv-b'),
      claim('sorter-demo-ticdc-0', 'ticdc', 'pv-c'),
      claim('tikv-demo-tikv-1', 'tikv'),
    ];
    expect(boundClaims(claims)).toEqual([
      { claim: 'pd-demo-pd-0', uid: 'uid-pd-demo-pd-0', volume: 'pv-b' },
      { claim: 'tikv-demo-tikv-0', uid: 'uid-tikv-demo-tikv-0', volume: 'pv-a' },
    ]);
  });

  test('patches each PV whose policy differs, only when it names the claim back', () => {
    const claims = boundClaims([
      claim('a', 'tikv', 'pv-a'),
      claim('b', 'tikv', 'pv-b'),
      claim('c', 'tikv', 'pv-c'),
      claim('d', 'tikv', 'pv-d'),
      claim('e', 'tikv', 'pv-e'),
      claim('f', 'tikv', 'pv-f'),
    ]);
    const volumes = new Map<string, PersistentVolume | undefined>([
      ['pv-a', pv('pv-a', 'Delete', { namespace: 'ns', name: 'a', uid: 'uid-a' })],
      ['pv-b', pv('pv-b', 'Retain', { namespace: 'ns', name: 'b', uid: 'uid-b' })],
      ['pv-c', pv('pv-c', 'Delete', { namespace: 'other', name: 'c' })],
      ['pv-d', pv('pv-d', 'Delete', { namespace: 'ns', name: 'someone-else' })],
      ['pv-e', pv('pv-e', 'Delete', { namespace: 'ns', name: 'e', uid: 'an-older-claim' })],
      ['pv-f', undefined],
    ]);
    expect(reclaimPolicyPatches('ns', claims, volumes, 'Retain')).toEqual([{ volume: 'pv-a', claim: 'a', from: 'Delete', to: 'Retain' }]);
    expect(reclaimPolicyPatches('ns', claims, volumes, 'Delete')).toEqual([{ volume: 'pv-b', claim: 'b', from: 'Retain', to: 'Delete' }]);
  });

  test('reads the settings value, Retain unless it says Delete', () => {
    expect([reclaimPolicyOf('Delete'), reclaimPolicyOf('Retain'), reclaimPolicyOf(undefined), reclaimPolicyOf('delete')]).toEqual([
      'Delete',
      'Retain',
      'Retain',
      'Retain',
    ]);
  });
});

describe('the controller', () => {
  function setter(volumes: Map<string, PersistentVolume>, forbidden = false) {
    const patches: string[] = [];
    const warnings: string[] = [];
    const refuse = (verb: string) => {
      throw new KubeError(`${verb}: HTTP 403: persistentvolumes is forbidden`, 403);
    };
    const s = new ReclaimPolicySetter({
      namespace: 'ns',
      cluster: 'demo',
      persistentVolume: async (name) => (forbidden ? refuse(`get pv ${name}`) : volumes.get(name)),
      patchReclaimPolicy: async (name, policy) => {
        patches.push(`${name}=${policy}`);
        volumes.get(name)!.spec!.persistentVolumeReclaimPolicy = policy;
      },
      warn: async (reason, message) => void warnings.push(`${reason}: ${message}`),
      info: () => {},
      everyMs: 1000,
    });
    return { s, patches, warnings };
  }
  const claims = [claim('tikv-demo-tikv-0', 'tikv', 'pv-a'), claim('tikv-demo-tikv-1', 'tikv', 'pv-b')];
  const volumes = () =>
    new Map([
      ['pv-a', pv('pv-a', 'Delete', { namespace: 'ns', name: 'tikv-demo-tikv-0' })],
      ['pv-b', pv('pv-b', 'Retain', { namespace: 'ns', name: 'tikv-demo-tikv-1' })],
      ['pv-x', pv('pv-x', 'Delete', { namespace: 'ns', name: 'not-ours' })],
    ]);

  test('sets the policy on the PVs that differ, once, and says so in the status', async () => {
    const vs = volumes();
    const { s, patches, warnings } = setter(vs);
    await s.pass({ claims, policy: 'Retain', now: 0 });
    await s.pass({ claims, policy: 'Retain', now: 2000 });
    expect(patches).toEqual(['pv-a=Retain']);
    expect(vs.get('pv-x')!.spec!.persistentVolumeReclaimPolicy).toBe('Delete');
    expect(s.current()).toEqual({
      pvReclaimPolicy: 'Retain',
      volumes: { 'tikv-demo-tikv-0': 'Retain', 'tikv-demo-tikv-1': 'Retain' },
      problem: null,
    });
    expect(warnings).toEqual([]);
    // A change in Git is applied at once, not at the next look.
    await s.pass({ claims, policy: 'Delete', now: 2001 });
    expect(patches).toEqual(['pv-a=Retain', 'pv-a=Delete', 'pv-b=Delete']);
  });

  test('without the ClusterRole: the status says what to grant, one Warning Event, nothing patched', async () => {
    const { s, patches, warnings } = setter(volumes(), true);
    await s.pass({ claims, policy: 'Retain', now: 0 });
    await s.pass({ claims, policy: 'Retain', now: 2000 });
    expect(patches).toEqual([]);
    expect(s.current()?.problem).toBe(
      'pvReclaimPolicy is not applied: the controller may not get or patch PersistentVolumes (get pv pv-a: HTTP 403: persistentvolumes is forbidden); ' +
        'grant it with the annotation tidb-gitops.io/pv-reclaim-policy: "true" on the TidbCluster, and apply the ClusterRole and ClusterRoleBinding ' +
        'tidb-gitops:ns:demo-discovery it renders (an Argo CD project must list both in clusterResourceWhitelist)',
    );
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^ReclaimPolicyNotApplied: pvReclaimPolicy is not applied: /);
  });
});
