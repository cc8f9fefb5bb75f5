/**
 * The simulator's field ownership (server-side apply and updates), and with it the ownership contract:
 * a GitOps tool re-applying the rendered StatefulSet never changes `spec.replicas` or the partition
 * the controller set, whether it applies client-side (three-way merge) or server-side (field
 * managers). The same model shows what would go wrong if the manifest carried those fields.
 */
import { KubeSim, type KubeObject } from '../../sim/kube-api';
import { fieldValues, removeField } from '../../sim/kube-fields';
import { CLIENT_SIDE_APPLY } from '../../sim/kube-registry';
import { cluster, render } from '../../support/render';

const CONTROLLER = 'tidb-gitops-controller';
const FLUX = 'kustomize-controller';
const ARGO = 'argocd-controller';
const REPLICAS = '.spec.replicas';
const PARTITION = '.spec.updateStrategy.rollingUpdate.partition';

let sim: KubeSim;
beforeEach(async () => {
  sim = await KubeSim.start();
});
afterEach(() => sim.close());

/** The rendered TiKV StatefulSet of a small cluster. */
function tikv(spec: Record<string, unknown> = {}): KubeObject {
  const objects = render(cluster(spec, { name: 'c' }));
  return objects.find((o) => o.kind === 'StatefulSet' && o.metadata.name === 'c-tikv') as KubeObject;
}

/** What the controller sends: replicas and partition, and nothing else, by server-side apply. */
function controllerSets(replicas: number, partition: number): void {
  sim.serverSideApply(
    {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'c-tikv', namespace: 'ns' },
      spec: { replicas, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition } } },
    } as KubeObject,
    CONTROLLER,
  );
}

const live = () => sim.get('StatefulSet', 'ns', 'c-tikv')!;
const ownersOf = (field: string) =>
  Object.entries(sim.fieldOwners('StatefulSet', 'ns', 'c-tikv'))
    .filter(([, fields]) => fields.includes(field))
    .map(([m]) => m);

describe('field paths', () => {
  it('walks objects and lists keyed by name, and leaves identity and status out', () => {
    const paths = [
      ...fieldValues({
        apiVersion: 'v1',
        metadata: { name: 'a', uid: 'u', labels: { x: 'y' } },
        spec: { containers: [{ name: 'pd', image: 'i', args: ['a', 'b'] }], emptyObject: {} },
        status: { phase: 'Running' },
      }).keys(),
    ];
    expect(paths).toEqual([
      '.metadata.labels.x',
      '.spec.containers[name=pd].name',
      '.spec.containers[name=pd].image',
      '.spec.containers[name=pd].args',
      '.spec.emptyObject',
    ]);
  });

  it('removes a field inside a keyed list', () => {
    const o = {
      spec: {
        containers: [
          { name: 'a', image: 'x' },
          { name: 'b', image: 'y' },
        ],
      },
    };
    removeField(o, '.spec.containers[name=b].image');
    removeField(o, '.spec.missing.field');
    expect(o).toEqual({ spec: { containers: [{ name: 'a', image: 'x' }, { name: 'b' }] } });
  });
});

describe('server-side apply', () => {
  it('owns what it applies, conflicts on a field another manager set unless forced, and shares equal values', () => {
    const cm = (data: Record<string, string>) =>
      ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns' }, data }) as KubeObject;
    sim.serverSideApply(cm({ k: 'v', shared: 's' }), 'one');
    sim.serverSideApply(cm({ shared: 's' }), 'two', false);
    expect(sim.fieldOwners('ConfigMap', 'ns', 'a')).toEqual({ one: ['.data.k', '.data.shared'], two: ['.data.shared'] });
    expect(() => sim.serverSideApply(cm({ k: 'w' }), 'two', false)).toThrow(/Apply failed with 1 conflict: conflict with "one": \.data\.k/);
    // One stops applying the shared key: two still owns it, so it stays.
    sim.serverSideApply(cm({ k: 'v' }), 'one');
    expect(sim.get('ConfigMap', 'ns', 'a')!.data).toEqual({ k: 'v', shared: 's' });
    sim.serverSideApply(cm({ k: 'w', shared: 's' }), 'two', true);
    expect(sim.fieldOwners('ConfigMap', 'ns', 'a')).toEqual({ two: ['.data.k', '.data.shared'] });
  });

  it("leaves a new object's defaulted fields unowned, while an update owns what it changed", () => {
    sim.serverSideApply(tikv(), FLUX);
    expect(live().spec.replicas).toBe(1);
    expect(ownersOf(REPLICAS)).toEqual([]);
    sim.apply({ ...tikv(), metadata: { ...tikv().metadata, name: 'c-tikv' } } as KubeObject);
    expect(ownersOf('.spec.template.spec.containers[name=tikv].image')).toEqual(expect.arrayContaining([FLUX]));
  });
});

describe('the ownership contract: re-applying the render keeps what the controller set', () => {
  it('rendered StatefulSets carry neither replicas nor a partition', () => {
    const sts = tikv();
    expect(sts.spec.replicas).toBeUndefined();
    expect(sts.spec.updateStrategy?.rollingUpdate?.partition).toBeUndefined();
  });

  it('server-side apply (Flux, Argo CD with ServerSideApply=true), forced, changes neither field', () => {
    sim.serverSideApply(tikv(), FLUX);
    controllerSets(4, 2);
    sim.serverSideApply(tikv({ version: 'v8.5.1' }), FLUX);
    sim.serverSideApply(tikv({ version: 'v8.5.1' }), ARGO);
    expect(live().spec.replicas).toBe(4);
    expect(live().spec.updateStrategy.rollingUpdate.partition).toBe(2);
    expect(live().spec.template.spec.containers[0].image).toContain('v8.5.1');
    expect(ownersOf(REPLICAS)).toEqual([CONTROLLER]);
    expect(ownersOf(PARTITION)).toEqual([CONTROLLER]);
  });

  it("client-side apply (kubectl apply, Argo CD's default) changes neither field", () => {
    sim.apply(tikv());
    // On create the defaulted fields belong to the creator; the controller's forced apply takes them.
    expect(ownersOf(REPLICAS)).toEqual([CLIENT_SIDE_APPLY]);
    controllerSets(4, 2);
    expect(ownersOf(REPLICAS)).toEqual([CONTROLLER]);
    sim.apply(tikv({ version: 'v8.5.1' }));
    sim.apply(tikv({ version: 'v8.5.1' }));
    expect(live().spec.replicas).toBe(4);
    expect(live().spec.updateStrategy.rollingUpdate.partition).toBe(2);
    expect(ownersOf(REPLICAS)).toEqual([CONTROLLER]);
    expect(ownersOf(PARTITION)).toEqual([CONTROLLER]);
  });

  it('would fight the controller if the manifest carried the fields: the model catches that', () => {
    const withReplicas = tikv();
    withReplicas.spec = { ...withReplicas.spec, replicas: 3, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 3 } } };
    sim.serverSideApply(tikv(), FLUX);
    controllerSets(4, 2);
    expect(() => sim.serverSideApply(withReplicas, FLUX, false)).toThrow(/conflict with "tidb-gitops-controller": \.spec\.replicas/);
    sim.serverSideApply(withReplicas, FLUX, true);
    expect(live().spec.replicas).toBe(3);
    expect(live().spec.updateStrategy.rollingUpdate.partition).toBe(3);

    sim.delete('StatefulSet', 'ns', 'c-tikv');
    sim.apply(withReplicas);
    controllerSets(4, 2);
    // kubectl's three-way merge patches every field the manifest gives that differs from the live one.
    sim.apply(withReplicas);
    expect(live().spec.replicas).toBe(3);
    expect(live().spec.updateStrategy.rollingUpdate.partition).toBe(3);
  });
});
