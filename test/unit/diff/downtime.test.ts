/**
 * The impact report tells the truth about downtime and order: a restart of a component's only Pod,
 * every TiKV restarting with no spare store, a change that both scales and restarts, the order the
 * controller restarts components in and what it checks between Pods, and a changed field's old and
 * new values.
 */
import { buildModel, compareModels, toMarkdown, type DiffReport, type KubeObject } from '../../../src/diff';
import { DISRUPTION_BUDGETS_ANNOTATION } from '../../../src/tidbcluster/guard-rails';
import { cluster, render, type Obj } from '../../support/render';

function diff(before: Obj, after: Obj): DiffReport {
  return compareModels(buildModel(render(before) as KubeObject[]), buildModel(render(after) as KubeObject[]));
}
const risks = (r: DiffReport) => r.clusters[0].risks.map((x) => `${x.id}${x.component ? ` ${x.component}` : ''}`);
const spec = (o: Obj) => cluster({ ...cluster().spec, ...o });

describe('downtime and order in the impact report', () => {
  test("a restart of a component's only Pod says what stops; more replicas, none", () => {
    const one = spec({
      pd: { replicas: 1, requests: { storage: '10Gi' } },
      tikv: { replicas: 4, requests: { storage: '100Gi' } },
      tidb: { replicas: 1 },
    });
    const r = diff(one, { ...one, spec: { ...one.spec, version: 'v8.5.8' } });
    expect(risks(r)).toEqual(['single-replica-restart pd', 'single-replica-restart tidb']);
    expect(r.clusters[0].risks[1].message).toBe(
      'TiDB has one replica: its restart takes down every SQL connection: clients are disconnected and cannot connect, until the new Pod is up. Run more replicas to restart without downtime.',
    );
    // The controller's own Deployment restarting is said in its section, not as downtime.
    const image = diff(one, { ...one, spec: { ...one.spec, discovery: { image: 'registry.example.com/tidb-gitops:9.9.9' } } });
    expect(risks(image)).toEqual([]);
  });

  test('every TiKV restarting with no more stores than copies of each region: no spare store', () => {
    const stores = (n: number, config?: Obj) =>
      spec({
        tikv: { replicas: n, requests: { storage: '100Gi' } },
        ...(config && { pd: { replicas: 3, requests: { storage: '10Gi' }, config } }),
      });
    const bump = (c: Obj) => diff(c, { ...c, spec: { ...c.spec, version: 'v8.5.8' } });
    expect(risks(bump(stores(3)))).toEqual(['tikv-no-spare-store tikv']);
    expect(bump(stores(3)).clusters[0].risks[0].message).toContain('with 3 stores and replication.max-replicas 3');
    expect(risks(bump(stores(4)))).toEqual([]);
    // PD's max-replicas from its config counts.
    const five = { replication: { 'max-replicas': 5 } };
    expect(risks(bump(stores(5, five)))).toEqual(['tikv-no-spare-store tikv']);
    expect(risks(bump(stores(6, five)))).toEqual([]);
  });

  test('one change that scales and restarts: said, with what waits for the scaling', () => {
    const base = spec({ tikv: { replicas: 4, requests: { storage: '100Gi' } } });
    const after = { ...base, spec: { ...base.spec, version: 'v8.5.8', tikv: { ...base.spec.tikv, replicas: 5 } } };
    const r = diff(base, after);
    expect(risks(r)).toEqual(['scale-and-restart']);
    expect(r.clusters[0].risks[0].message).toBe(
      'one change scales TiKV 4 -> 5 and restarts PD, TiKV, TiDB: the controller scales first, and TiKV, TiDB restart only once the scaling is done; a scaling that cannot finish holds the restarts. Two pull requests are easier to review and to watch.',
    );
    // A scale alone is no such risk.
    expect(risks(diff(base, { ...base, spec: { ...base.spec, tikv: { ...base.spec.tikv, replicas: 5 } } }))).toEqual([]);
  });

  test('the order the controller restarts in, and what it checks between Pods', () => {
    const base = spec({
      tikv: { replicas: 4, requests: { storage: '100Gi' } },
      tiflash: { replicas: 2, storageClaims: [{ resources: { requests: { storage: '10Gi' } } }] },
    });
    const md = toMarkdown(diff(base, { ...base, spec: { ...base.spec, version: 'v8.5.8' } }));
    expect(md).toContain(
      '**Order**: the controller restarts PD, then TiFlash, then TiKV, then TiDB, each component once every one it waits for is done.',
    );
    expect(md).toContain(
      "driven by the companion controller `demo-discovery`: each store's region leaders move away before its restart, and the next waits until the store is Up with its leaders back.",
    );
    // One component restarting: no order to say.
    const tidbOnly = toMarkdown(diff(base, { ...base, spec: { ...base.spec, tidb: { ...base.spec.tidb, version: 'v8.5.8' } } }));
    expect(tidbOnly).not.toContain('**Order**');
  });

  test("a changed object shows each field's old and new value when they are few and short", () => {
    const md = toMarkdown(diff(cluster(), cluster({}, { annotations: { [DISRUPTION_BUDGETS_ANNOTATION]: 'tidb=2' } })));
    expect(md).toContain('- changed: PodDisruptionBudget `demo-tidb` (spec.maxUnavailable: `1` -> `2`)');
  });
});
