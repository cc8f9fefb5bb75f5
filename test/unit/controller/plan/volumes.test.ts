import type { Pvc, StatefulSet } from '../../../../src/controller/model/objects';
import { parseVolumeSizes } from '../../../../src/controller/model/volume-sizes';
import { recreateKey, recreateRecord, recreateRecordsOf } from '../../../../src/controller/records/recreate';
import { pdState, planOne, pods, sts } from '../../../support/plan-fixtures';

/** TiKV with a data template `tikv` of `size` and a `tikv-raft` one of 5Gi. */
function tikv(size = '10Gi', o: Parameters<typeof sts>[1] = {}): StatefulSet {
  const s = sts('tikv', o);
  s.spec!.volumeClaimTemplates = [
    { metadata: { name: 'tikv' }, spec: { resources: { requests: { storage: size } } } },
    { metadata: { name: 'tikv-raft' }, spec: { resources: { requests: { storage: '5Gi' } } } },
  ];
  return s;
}

function claim(template: string, ord: number, asked: string, capacity = asked, o: { phase?: string; pending?: boolean } = {}): Pvc {
  return {
    metadata: { name: `${template}-c-tikv-${ord}`, uid: `uid-${template}-${ord}`, labels: { 'app.kubernetes.io/component': 'tikv' } },
    spec: { resources: { requests: { storage: asked } } },
    status: {
      phase: o.phase ?? 'Bound',
      capacity: { storage: capacity },
      ...(o.pending && { conditions: [{ type: 'FileSystemResizePending', status: 'True' }] }),
    },
  };
}

const claims = (asked: string, capacity = asked) =>
  [0, 1, 2].flatMap((i) => [claim('tikv', i, asked, capacity), claim('tikv-raft', i, '5Gi')]);
const plan = (s: StatefulSet, volumes: Pvc[], sizes: Record<string, string> | undefined, extra = {}) =>
  planOne({ kind: 'tikv', sts: s, pods: pods('tikv', ['r1', 'r1', 'r1']) }, pdState(), [], {
    volumes,
    volumeSizes: sizes && { tikv: sizes },
    ...extra,
  });

describe('growing volumes from Git', () => {
  test('no sizes, or sizes equal to the templates (in another notation): nothing to do', () => {
    expect(plan(tikv(), claims('10Gi'), undefined).action).toBeUndefined();
    const same = plan(tikv(), claims('10Gi'), { tikv: '10737418240', 'tikv-raft': '5Gi' });
    expect(same.action).toBeUndefined();
    expect(same.reason).toBe('up to date');
  });

  test('a larger size grows every bound claim of the replicas, and only the template that changed', () => {
    const extra = claim('tikv', 3, '10Gi'); // beyond the replicas: left for deferred deletion or reuse
    const p = plan(tikv(), [...claims('10Gi'), extra], { tikv: '20Gi', 'tikv-raft': '5Gi' });
    expect(p.action).toEqual({
      type: 'resize-volumes',
      volumes: [0, 1, 2].map((i) => ({ name: `tikv-c-tikv-${i}`, uid: `uid-tikv-${i}`, size: '20Gi' })),
    });
    expect(p.event).toMatchObject({ type: 'Normal', reason: 'VolumeResize' });
    expect(p.busy).toBe(true);
  });

  test('an unbound claim is waited for: the API server grows only bound ones', () => {
    const volumes = [claim('tikv', 0, '10Gi', '10Gi', { phase: 'Pending' })];
    const p = plan(tikv(), volumes, { tikv: '20Gi' });
    expect(p.action).toBeUndefined();
    expect(p.reason).toContain('waiting for tikv-c-tikv-0 to be bound');
  });

  test('asked for but not reached: waits for the storage, naming a pending file system resize', () => {
    const volumes = [
      claim('tikv', 0, '20Gi', '10Gi', { pending: true }),
      claim('tikv', 1, '20Gi', '20Gi'),
      claim('tikv', 2, '20Gi', '10Gi'),
    ];
    const p = plan(tikv(), volumes, { tikv: '20Gi' });
    expect(p.action).toBeUndefined();
    expect(p.busy).toBe(true);
    expect(p.reason).toBe(
      'waiting for the storage to grow: tikv-c-tikv-0 (10Gi of 20Gi, file system resize pending on the node), tikv-c-tikv-2 (10Gi of 20Gi)',
    );
  });

  test('every claim grown: the StatefulSet is re-created with the new template sizes', () => {
    const p = plan(tikv(), claims('20Gi'), { tikv: '20Gi', 'tikv-raft': '5Gi' });
    expect(p.action).toEqual({ type: 'recreate', sizes: { tikv: '20Gi' } });
    expect(p.event).toMatchObject({ type: 'Normal', reason: 'VolumeTemplatesUpdate' });
  });

  test('a smaller size is refused, with the size to go back to, and nothing is touched', () => {
    const p = plan(tikv('20Gi'), claims('20Gi'), { tikv: '10Gi' });
    expect(p.action).toBeUndefined();
    expect(p.busy).toBe(false);
    expect(p.reason).toBe('volumes cannot shrink (tikv 20Gi -> 10Gi): set the size back to at least 20Gi in Git');
    expect(p.event).toMatchObject({ type: 'Warning', reason: 'VolumeShrinkRefused' });
  });

  test("the API server's refusal stands for the sizes it refused, and new sizes are tried again", () => {
    const refusal = {
      message: 'the API server refused to grow tikv-c-tikv-0 to 20Gi: no expansion',
      sizes: JSON.stringify({ tikv: '20Gi' }),
    };
    const refused = plan(tikv(), claims('10Gi'), { tikv: '20Gi' }, { volumeRefusals: { tikv: refusal } });
    expect(refused.action).toBeUndefined();
    expect(refused.event).toMatchObject({ type: 'Warning', reason: 'VolumeResizeRefused' });
    expect(refused.reason).toContain('no expansion');
    const retried = plan(tikv(), claims('10Gi'), { tikv: '30Gi' }, { volumeRefusals: { tikv: refusal } });
    expect(retried.action).toMatchObject({ type: 'resize-volumes' });
  });

  test('an upgrade or a scale-in under way goes first', () => {
    const upgrading = planOne(
      { kind: 'tikv', sts: tikv('10Gi', { current: 'r1', update: 'r2' }), pods: pods('tikv', ['r1', 'r1', 'r1']) },
      pdState(),
      [],
      {
        volumes: claims('10Gi'),
        volumeSizes: { tikv: { tikv: '20Gi' } },
      },
    );
    expect(upgrading.action?.type).not.toBe('resize-volumes');
  });
});

describe('the re-creation record', () => {
  const live = {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: {
      name: 'c-tikv',
      namespace: 'ns',
      uid: 'old',
      resourceVersion: '42',
      generation: 3,
      creationTimestamp: '2026-01-01T00:00:00Z',
      labels: { a: 'b' },
      annotations: { 'tidb-gitops.io/replicas': '3' },
      managedFields: [{ manager: 'flux', operation: 'Apply' }],
    },
    spec: {
      replicas: 3,
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 3 } },
      template: { metadata: { creationTimestamp: null, labels: { a: 'b' } }, spec: { containers: [] } },
      volumeClaimTemplates: [
        {
          metadata: { name: 'tikv', creationTimestamp: null },
          spec: { resources: { requests: { storage: '10Gi' } } },
          status: { phase: 'Pending' },
        },
        { metadata: { name: 'tikv-raft' }, spec: { resources: { requests: { storage: '5Gi' } } } },
      ],
    },
    status: { replicas: 3 },
  };

  test('keeps the spec (replicas and partition too), metadata without server fields, and the new sizes', () => {
    const r = recreateRecord(live, { tikv: '20Gi' });
    expect(r.uid).toBe('old');
    expect(r.managedFields).toEqual(live.metadata.managedFields);
    expect(r.object.metadata).toEqual({
      name: 'c-tikv',
      namespace: 'ns',
      labels: { a: 'b' },
      annotations: { 'tidb-gitops.io/replicas': '3' },
    });
    expect(r.object.status).toBeUndefined();
    expect(r.object.spec.replicas).toBe(3);
    expect(r.object.spec.updateStrategy).toEqual(live.spec.updateStrategy);
    expect(r.object.spec.volumeClaimTemplates.map((t: any) => t.spec.resources.requests.storage)).toEqual(['20Gi', '5Gi']);
    expect(r.object.spec.template.metadata).toEqual({ labels: { a: 'b' } });
    expect(live.spec.volumeClaimTemplates[0].spec.resources.requests.storage).toBe('10Gi'); // not mutated
  });

  test('round-trips through the status ConfigMap, which may hold other keys and bad records', () => {
    const r = recreateRecord(live, { tikv: '20Gi' });
    const data = { 'status.json': '{}', [recreateKey('tikv')]: JSON.stringify(r), [recreateKey('pd')]: 'not json' };
    expect([...recreateRecordsOf(data)]).toEqual([['tikv', r]]);
  });

  test('sizes.json: components of templates of quantities, or a message saying what is wrong', () => {
    expect(parseVolumeSizes('{"tikv":{"tikv":"20Gi"}}')).toEqual({ tikv: { tikv: '20Gi' } });
    expect(parseVolumeSizes(undefined)).toEqual({});
    expect(() => parseVolumeSizes('[]')).toThrow('expected a JSON object of components');
    expect(() => parseVolumeSizes('{"tikv":{"tikv":"big"}}')).toThrow('tikv.tikv: expected a quantity such as "20Gi"');
  });
});
