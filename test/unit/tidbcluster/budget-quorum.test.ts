/**
 * Budgets that would let a drain take a quorum away are refused with the arithmetic, at the
 * annotation's line; a PD of two members, which no budget can keep serving through a drain, is a
 * warning at its replica count.
 */
import { stringify } from 'yaml';
import { loadTidbClusters } from '../../../src/tidbcluster/load';
import { DISRUPTION_BUDGETS_ANNOTATION } from '../../../src/tidbcluster/guard-rails';
import { cluster, type Obj } from '../../support/render';

const WHERE = `tc.yaml: document 1: metadata.annotations["${DISRUPTION_BUDGETS_ANNOTATION}"] (line 7): `;

function load(doc: Obj): { errors: string[]; warnings: string[] } {
  const loaded = loadTidbClusters(stringify(doc), 'tc.yaml');
  return { errors: loaded.errors.flatMap((e) => e.message.split('\n')), warnings: loaded.clusters.flatMap((c) => [...c.warnings]) };
}
const budgets = (value: string, spec: Obj = {}) => load(cluster(spec, { annotations: { [DISRUPTION_BUDGETS_ANNOTATION]: value } }));

describe('budgets that break quorum', () => {
  test('fails pd=2 on three members: a majority could go at once', () => {
    expect(budgets('pd=2').errors).toEqual([
      `${WHERE}pd=2: 3 PD members need 2 up to keep a majority, so a drain may take at most 1 at once; pd=2 lets it take 2, and PD (so the whole cluster) stops until they are back; write pd=1`,
    ]);
  });

  test('fails a percentage that rounds up past the majority: pd=50% of 3 is 2', () => {
    expect(budgets('pd=50%').errors).toEqual([
      expect.stringContaining(
        `${WHERE}pd=50%: 3 PD members need 2 up to keep a majority, so a drain may take at most 1 at once; pd=50% lets it take 2`,
      ),
    ]);
  });

  test('fails tikv=50% of three stores with the default max-replicas (3)', () => {
    expect(budgets('tikv=50%').errors).toEqual([
      `${WHERE}tikv=50%: lets a drain take 2 TiKV stores at once (50% of 3 stores, rounded up), and a region keeps 3 replicas (replication.max-replicas), which need 2 up to keep a majority: 2 stores may hold 2 of one region's replicas, and it cannot be read or written until they are back; write tikv=1`,
    ]);
  });

  test('fails tikv=2 with max-replicas 3, accepts it with max-replicas 5 from the PD config', () => {
    expect(budgets('tikv=2').errors).toEqual([
      expect.stringContaining(`${WHERE}tikv=2: lets a drain take 2 TiKV stores at once, and a region keeps 3 replicas`),
    ]);
    const five = {
      pd: { replicas: 3, requests: { storage: '10Gi' }, config: { replication: { 'max-replicas': 5 } } },
      tikv: { replicas: 5, requests: { storage: '100Gi' } },
    };
    expect(budgets('tikv=2', five).errors).toEqual([]);
    expect(budgets('tikv=3', five).errors).toEqual([
      expect.stringContaining(
        'tikv=3: lets a drain take 3 TiKV stores at once, and a region keeps 5 replicas (replication.max-replicas), which need 3 up',
      ),
    ]);
  });

  test('accepts what keeps a majority: pd=2 of five members, the defaults, a small percentage', () => {
    expect(budgets('pd=2', { pd: { replicas: 5, requests: { storage: '10Gi' } } })).toEqual({ errors: [], warnings: [] });
    expect(load(cluster())).toEqual({ errors: [], warnings: [] });
    expect(budgets('tikv=25%, pd=33%')).toEqual({ errors: [], warnings: [] });
  });

  test('warns that two PD members lose quorum with any budget; refuses pd=2 on them', () => {
    const two = { pd: { replicas: 2, requests: { storage: '10Gi' } } };
    const { errors, warnings } = load(cluster(two));
    expect(errors).toEqual([]);
    expect(warnings).toEqual([
      'tc.yaml: document 1: spec.pd.replicas (line 9): warning: 2 PD members need 2 up to keep a majority, so a drain may take at most 0 at once; pd=1 lets it take 1: a drain that evicts one member stops PD (and the whole cluster) until it is back, and no budget can prevent it (0 refuses every eviction); run 3 PD members (or 1, which has no quorum to lose)',
    ]);
    expect(budgets('pd=1', two).warnings).toEqual([expect.stringContaining(`${WHERE}warning: 2 PD members need 2 up`)]);
    expect(budgets('pd=2', two).errors).toEqual([
      expect.stringContaining(
        `${WHERE}pd=2: 2 PD members need 2 up to keep a majority, so a drain may take at most 0 at once; pd=2 lets it take 2`,
      ),
    ]);
    // No budget, no warning: the user chose it.
    expect(budgets('pd=none', two)).toEqual({ errors: [], warnings: [] });
    // One member has no quorum to keep: a drain stops it whatever, as it stops any single server.
    expect(load(cluster({ pd: { replicas: 1, requests: { storage: '10Gi' } } }))).toEqual({ errors: [], warnings: [] });
  });
});
