/**
 * A PodDisruptionBudget kept beside a cluster that selects Pods a rendered budget covers too is
 * refused, naming both: the Eviction API answers 500 for a Pod with two budgets, and drains stall.
 */
import { stringify } from 'yaml';
import { selects } from '../../../src/render/budget-overlap';
import { DISRUPTION_BUDGETS_ANNOTATION } from '../../../src/tidbcluster/guard-rails';
import { cluster, type Obj } from '../../support/render';
import { renderFolders } from '../../support/render-dir';

const run = renderFolders('budget-overlap');

const pdb = (name: string, selector: Obj | undefined, namespace?: string): Obj => ({
  apiVersion: 'policy/v1',
  kind: 'PodDisruptionBudget',
  metadata: { name, ...(namespace && { namespace }) },
  spec: { maxUnavailable: 1, ...(selector && { selector }) },
});

describe('a kept PodDisruptionBudget over rendered Pods', () => {
  test("fails a user's budget that selects the TiKV Pods, naming both budgets, at its selector's line", () => {
    const mine = pdb('tikv-budget', { matchLabels: { 'app.kubernetes.io/component': 'tikv' } });
    const { status, stderr, dir: d } = run({ 'tc.yaml': stringify(cluster()), 'pdb.yaml': stringify(mine) });
    expect(status).toBe(1);
    expect(stderr.split('\n')[0]).toBe(
      `${d}/pdb.yaml: document 1: spec.selector (line 8): PodDisruptionBudget tikv-budget selects the Pods of StatefulSet demo-tikv, which PodDisruptionBudget demo-tikv (rendered from ${d}/tc.yaml: document 1) covers too: ` +
        'the Eviction API refuses to evict a Pod that two budgets select (HTTP 500, "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support"), ' +
        'so every drain of a Node running one of them stalls; delete this budget, or keep it and turn the rendered one off with tidb-gitops.io/disruption-budgets: "tikv=none"',
    );
  });

  test('fails an empty selector (every Pod of the namespace, in policy/v1) once per rendered budget', () => {
    const { status, stderr } = run({ 'tc.yaml': stringify(cluster()), 'pdb.yaml': stringify(pdb('all', {})) });
    expect(status).toBe(1);
    expect(stderr.match(/PodDisruptionBudget all selects/g)).toHaveLength(3);
  });

  test('accepts a budget of its own where the rendered one is off, in another namespace, or over other Pods', () => {
    const off = cluster({}, { annotations: { [DISRUPTION_BUDGETS_ANNOTATION]: 'tikv=none' } });
    const tikv = { matchLabels: { 'app.kubernetes.io/instance': 'demo', 'app.kubernetes.io/component': 'tikv' } };
    expect(run({ 'tc.yaml': stringify(off), 'pdb.yaml': stringify(pdb('mine', tikv)) }).status).toBe(0);
    expect(run({ 'tc.yaml': stringify(cluster()), 'pdb.yaml': stringify(pdb('mine', tikv, 'other')) }).status).toBe(0);
    expect(run({ 'tc.yaml': stringify(cluster()), 'pdb.yaml': stringify(pdb('app', { matchLabels: { app: 'web' } })) }).status).toBe(0);
    // policy/v1: a budget without a selector selects nothing.
    expect(run({ 'tc.yaml': stringify(cluster()), 'pdb.yaml': stringify(pdb('none', undefined)) }).status).toBe(0);
  });

  test.each([
    [{ matchExpressions: [{ key: 'c', operator: 'In', values: ['tikv', 'tiflash'] }] }, true],
    [{ matchExpressions: [{ key: 'c', operator: 'NotIn', values: ['tikv'] }] }, false],
    [{ matchExpressions: [{ key: 'x', operator: 'DoesNotExist' }] }, true],
    [{ matchExpressions: [{ key: 'c', operator: 'Exists' }] }, true],
    [{ matchLabels: { c: 'tikv' }, matchExpressions: [{ key: 'i', operator: 'In', values: ['b'] }] }, false],
    [{}, true],
    [null, false],
  ])('selector %j takes {c: tikv, i: a}: %s', (selector, expected) => {
    expect(selects(selector as never, { c: 'tikv', i: 'a' })).toBe(expected);
  });
});
