/**
 * Clusters that share one PD (`spec.cluster`) share one budget for their TiKV and TiFlash stores,
 * which hold replicas of the same regions; where a PodDisruptionBudget cannot count them all (the
 * PD's cluster rendered elsewhere, or in another namespace), a warning says so.
 */
import { stringify } from 'yaml';
import { selects } from '../../../src/render/budget-overlap';
import { DISRUPTION_BUDGETS_ANNOTATION } from '../../../src/tidbcluster/guard-rails';
import { cluster, type Obj } from '../../support/render';
import { renderFolders } from '../../support/render-dir';

const run = renderFolders('budget-groups');

const tiflash = { replicas: 1, storageClaims: [{ resources: { requests: { storage: '10Gi' } } }] };
/** A cluster with no PD of its own that joins `demo`'s. */
const joined = (name: string, metadata: Obj = {}, join: Obj = { name: 'demo' }): Obj => {
  const c = cluster({ cluster: join, tikv: { replicas: 2, requests: { storage: '100Gi' } }, tiflash }, { name, ...metadata });
  const { pd: _pd, ...spec } = c.spec as Obj;
  return { ...c, spec };
};
const budgets = (docs: Obj[]) => docs.filter((o) => o.kind === 'PodDisruptionBudget');
const podsOf = (docs: Obj[], budget: Obj) =>
  docs
    .filter((o) => o.kind === 'StatefulSet' && selects(budget.spec.selector, o.spec.template.metadata.labels))
    .map((o) => o.metadata.name);

describe('one budget for the stores of one PD', () => {
  test("the budget of the PD's cluster counts the TiKV and TiFlash Pods of every cluster joined to it; theirs are not rendered", () => {
    const { status, stderr, docs } = run({ 'a.yaml': stringify(cluster({ tiflash })), 'b.yaml': stringify(joined('more')) });
    expect(stderr).not.toContain('warning: the tikv stores');
    expect(status).toBe(0);
    const names = budgets(docs).map((b) => b.metadata.name);
    expect(names.filter((n) => /-(tikv|tiflash)$/.test(n)).sort()).toEqual(['demo-tiflash', 'demo-tikv']);
    const tikv = budgets(docs).find((b) => b.metadata.name === 'demo-tikv')!;
    expect(tikv.spec.selector).toEqual({
      matchLabels: {
        'app.kubernetes.io/name': 'tidb-cluster',
        'app.kubernetes.io/managed-by': 'tidb-operator',
        'app.kubernetes.io/component': 'tikv',
      },
      matchExpressions: [{ key: 'app.kubernetes.io/instance', operator: 'In', values: ['demo', 'more'] }],
    });
    expect(podsOf(docs, tikv)).toEqual(['demo-tikv', 'more-tikv']);
    expect(podsOf(docs, budgets(docs).find((b) => b.metadata.name === 'demo-tiflash')!)).toEqual(['demo-tiflash', 'more-tiflash']);
    // The joined cluster keeps the budgets of what it does not share: its TiDB.
    expect(names).toContain('more-tidb');
  });

  test("fails a budget set on the joined cluster for what the PD's cluster counts, at its annotation", () => {
    const b = joined('more', { annotations: { [DISRUPTION_BUDGETS_ANNOTATION]: 'tikv=1' } });
    const { status, stderr, dir: d } = run({ 'a.yaml': stringify(cluster()), 'b.yaml': stringify(b) });
    expect(status).toBe(1);
    expect(stderr).toContain(
      `${d}/b.yaml: document 1: metadata.annotations["${DISRUPTION_BUDGETS_ANNOTATION}"] (line 7): tikv: this cluster's tikv Pods are counted by the budget demo-tikv of demo (namespace ns), since their stores share one PD; set the budget there`,
    );
  });

  test('counts every store of the PD for quorum: tikv=25% of 3 + 2 stores is 2', () => {
    const a = cluster({}, { annotations: { [DISRUPTION_BUDGETS_ANNOTATION]: 'tikv=25%' } });
    expect(run({ 'a.yaml': stringify(a) }).status).toBe(0);
    const { status, stderr } = run({ 'a.yaml': stringify(a), 'b.yaml': stringify(joined('more')) });
    expect(status).toBe(1);
    expect(stderr).toContain('tikv=25%: lets a drain take 2 TiKV stores at once (25% of 5 stores, rounded up)');
    expect(stderr).toContain('(counting the 5 TiKV stores of every cluster of this PD)');
  });

  test("warns where one budget cannot count them all: the PD's cluster not in the render, or in another namespace", () => {
    const alone = run({ 'b.yaml': stringify(joined('more')) });
    expect(alone.status).toBe(0);
    expect(alone.stderr).toContain(
      `${alone.dir}/b.yaml: document 1: spec.cluster (line 15): warning: the tikv stores of this cluster join the PD of demo (namespace ns), which this render does not hold: its budget more-tikv counts only the stores of the clusters rendered here`,
    );
    expect(budgets(alone.docs).map((b) => b.metadata.name)).toContain('more-tikv');
    const apart = run({
      'a.yaml': stringify(cluster()),
      'b.yaml': stringify(joined('more', { namespace: 'other' }, { name: 'demo', namespace: 'ns' })),
    });
    expect(apart.status).toBe(0);
    expect(apart.stderr).toContain(
      'spec.cluster (line 15): warning: the tikv stores of this cluster share one PD with demo (namespace ns), in another namespace, and a PodDisruptionBudget selects Pods of its own namespace only',
    );
    expect(budgets(apart.docs).find((b) => b.metadata.name === 'demo-tikv')!.spec.selector.matchLabels['app.kubernetes.io/instance']).toBe(
      'demo',
    );
  });
});
