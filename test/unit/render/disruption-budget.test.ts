/**
 * PodDisruptionBudgets: one per component by default, set or turned off with the TidbCluster's
 * `tidb-gitops.io/disruption-budgets` annotation, refused with its line when it cannot be read, and
 * reported by `diff` when one is removed or weakened.
 */
import { stringify } from 'yaml';
import { buildModel, compareModels, type KubeObject } from '../../../src/diff';
import { loadTidbClusters } from '../../../src/tidbcluster/load';
import { CLUSTER_SETTING_ANNOTATIONS, DISRUPTION_BUDGETS_ANNOTATION, DRAIN_HOOKS_ANNOTATION } from '../../../src/tidbcluster/guard-rails';
import { cluster, render, type Obj } from '../../support/render';

const budgetsOf = (objects: Obj[]) => objects.filter((o) => o.kind === 'PodDisruptionBudget');
const annotated = (annotations: Record<string, string>, spec: Obj = {}) => cluster(spec, { annotations });

/** The load errors of one cluster document, one line each. */
function errorsOf(doc: Obj): string[] {
  const loaded = loadTidbClusters(stringify(doc), 'tc.yaml');
  return loaded.errors.flatMap((e) => e.message.split('\n'));
}

describe('disruption budgets', () => {
  test('every component gets one that lets a drain take one Pod at a time, selecting exactly its StatefulSet Pods', () => {
    const objects = render(
      cluster({
        tiflash: { replicas: 2, storageClaims: [{ resources: { requests: { storage: '10Gi' } } }] },
        ticdc: { replicas: 2 },
        tiproxy: { replicas: 2 },
      }),
    );
    const budgets = budgetsOf(objects);
    expect(budgets.map((b) => b.metadata.name)).toEqual([
      'demo-pd',
      'demo-tikv',
      'demo-tiflash',
      'demo-tidb',
      'demo-ticdc',
      'demo-tiproxy',
    ]);
    for (const b of budgets) {
      const sts = objects.find((o) => o.kind === 'StatefulSet' && o.metadata.name === b.metadata.name)!;
      expect(b.apiVersion).toBe('policy/v1');
      expect(b.metadata.namespace).toBe('ns');
      // PD and TiKV hold quorums: a Pod of theirs that is not serving is evicted only while the budget holds without it.
      const policy = ['demo-pd', 'demo-tikv'].includes(b.metadata.name) ? 'IfHealthyBudget' : 'AlwaysAllow';
      expect(b.spec).toEqual({ maxUnavailable: 1, selector: sts.spec.selector, unhealthyPodEvictionPolicy: policy });
      // What the selector finds: the StatefulSet's own Pods.
      expect(sts.spec.template.metadata.labels).toMatchObject(b.spec.selector.matchLabels);
    }
    // The discovery Deployment has a single replica: a budget would block every drain of its node.
    expect(budgets.find((b) => b.metadata.labels['app.kubernetes.io/component'] === 'discovery')).toBeUndefined();
  });

  test('PD micro-services and Pump get theirs', () => {
    const objects = render(
      cluster({
        pd: { replicas: 3, mode: 'ms', requests: { storage: '10Gi' } },
        pdms: [
          { name: 'tso', replicas: 2 },
          { name: 'scheduling', replicas: 2 },
        ],
        pump: { replicas: 2, requests: { storage: '10Gi' } },
      }),
    );
    expect(budgetsOf(objects).map((b) => b.metadata.name)).toEqual([
      'demo-pd',
      'demo-tso',
      'demo-scheduling',
      'demo-tikv',
      'demo-tidb',
      'demo-pump',
    ]);
  });

  test('the annotation sets a count or a percentage, or none, per component; the rest keep 1', () => {
    const objects = render(annotated({ [DISRUPTION_BUDGETS_ANNOTATION]: 'tikv=25%, tidb = 2,pd=none' }));
    expect(Object.fromEntries(budgetsOf(objects).map((b) => [b.metadata.name, b.spec.maxUnavailable]))).toEqual({
      'demo-tikv': '25%',
      'demo-tidb': 2,
    });
  });

  test('"none" renders no budget at all', () => {
    expect(budgetsOf(render(annotated({ [DISRUPTION_BUDGETS_ANNOTATION]: 'none' })))).toEqual([]);
  });

  test.each([
    ['tikv=0', 'tikv=0: a budget of 0 refuses every eviction'],
    ['tikv=one', 'tikv=one: expected a count of Pods (1 or more), a percentage of the replicas such as 25%, or none'],
    ['tikv=0%', 'tikv=0%: expected a percentage from 1% to 100%'],
    ['tikv=101%', 'tikv=101%: expected a percentage from 1% to 100%'],
    ['tivk=1', 'unknown component "tivk"; expected one of pd, tso, scheduling, tikv, tiflash, tidb, ticdc, pump, tiproxy'],
    ['tiflash=1', 'tiflash: the cluster has no tiflash'],
    ['tikv=1, tikv=2', 'tikv is named twice'],
    ['tikv:1', 'expected "none" or a list such as "tidb=25%, ticdc=none"'],
    ['', 'expected "none" or a list'],
  ])('%j is refused at the annotation, with its line', (value, message) => {
    const errors = errorsOf(annotated({ [DISRUPTION_BUDGETS_ANNOTATION]: value }));
    expect(errors).toEqual([
      expect.stringContaining(`tc.yaml: document 1: metadata.annotations["${DISRUPTION_BUDGETS_ANNOTATION}"] (line 7): `),
    ]);
    expect(errors[0]).toContain(message);
  });

  test('a tidb-gitops.io/ annotation the project does not read is refused, naming the ones it does', () => {
    const errors = errorsOf(annotated({ 'tidb-gitops.io/disruption-budget': 'none' }));
    expect(CLUSTER_SETTING_ANNOTATIONS.slice(0, 2)).toEqual([DISRUPTION_BUDGETS_ANNOTATION, DRAIN_HOOKS_ANNOTATION]);
    expect(errors).toEqual([
      `tc.yaml: document 1: metadata.annotations["tidb-gitops.io/disruption-budget"] (line 7): unknown setting; a TidbCluster takes ${CLUSTER_SETTING_ANNOTATIONS.slice(0, -1).join(', ')} and ${CLUSTER_SETTING_ANNOTATIONS[CLUSTER_SETTING_ANNOTATIONS.length - 1]}`,
    ]);
  });

  test('diff: a budget removed or loosened is a disruption-budget risk; added or tightened is not', () => {
    const risks = (before: Obj, after: Obj) =>
      compareModels(buildModel(render(before) as KubeObject[]), buildModel(render(after) as KubeObject[])).clusters.flatMap((c) =>
        c.risks.filter((r) => r.id === 'disruption-budget').map((r) => r.message),
      );
    // Five PD members and five replicas of each region: two of either may go at once.
    const five = {
      pd: { replicas: 5, requests: { storage: '10Gi' }, config: { replication: { 'max-replicas': 5 } } },
      tikv: { replicas: 5, requests: { storage: '100Gi' } },
    };
    const annotatedFive = (budgets: string) => cluster(five, { annotations: { [DISRUPTION_BUDGETS_ANNOTATION]: budgets } });
    const loose = annotatedFive('tikv=2, tidb=none, pd=40%');
    expect(risks(cluster(five), loose)).toEqual([
      'The PodDisruptionBudget of pd allows 40% of the Pods to be evicted at once, where it allowed 1 Pod: PD stops serving (and so does the whole cluster) once a majority of its members is down.',
      'The PodDisruptionBudget of tikv allows 2 Pods to be evicted at once, where it allowed 1 Pod: a region whose replicas lose their majority (two of three) cannot be read or written until they are back.',
      'The PodDisruptionBudget of tidb is removed (it allowed 1 Pod at once): a node drain or a cluster autoscaler may then evict any number of its Pods together; check that enough of tidb stays up to serve.',
    ]);
    expect(risks(loose, cluster(five))).toEqual([]);
    // Percentages count as the disruption controller scales them, rounded up: of 5 members, 40% is 2
    // (as loose as 2, no risk), 20% is 1 and 21% is 2 (looser).
    expect(risks(annotatedFive('pd=2'), annotatedFive('pd=40%'))).toEqual([]);
    expect(risks(annotatedFive('pd=20%'), annotatedFive('pd=21%'))).toHaveLength(1);
    // A component that goes is its own risk (component-removed), not a budget's.
    const { tidb: _tidb, ...noTidb } = cluster().spec;
    expect(risks(cluster(), { ...cluster(), spec: noTidb })).toEqual([]);
  });
});
