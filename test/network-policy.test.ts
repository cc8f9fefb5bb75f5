/**
 * The opt-in NetworkPolicies: one per component and one for the controller, admitting the SQL ports
 * from anywhere, every other port of the component from the TiDB clusters' Pods of the namespace
 * (and of the namespace `spec.cluster` joins), the metrics ports from Prometheus's namespace, and
 * nothing else; refused where they cannot be right; reported by `diff`.
 */
import { buildModel, compareModels, type KubeObject } from '../src/diff';
import { loadTidbClusters } from '../src/tidbcluster/load';
import { METRICS_FROM_ANNOTATION, NETWORK_POLICY_ANNOTATION } from '../src/tidbcluster/guard-rails';
import { cluster, render, toYaml, type Obj } from './support/render';

const policies = (objects: Obj[]) => objects.filter((o) => o.kind === 'NetworkPolicy');
const on = (extra: Record<string, string> = {}, spec: Obj = {}) => cluster(spec, { annotations: { [NETWORK_POLICY_ANNOTATION]: 'true', ...extra } });
const PEERS = { podSelector: { matchExpressions: [{ key: 'app.kubernetes.io/managed-by', operator: 'In', values: ['tidb-operator', 'tidb-gitops'] }] } };
const tcp = (...ports: (number | string)[]) => ports.map((port) => ({ protocol: 'TCP', port }));
const monitoring = (...ports: number[]) => ({ from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }], ports: tcp(...ports) });

describe('network policies', () => {
  test('are off by default', () => {
    expect(policies(render(cluster()))).toEqual([]);
  });

  test('one per component and one for the controller, each selecting exactly its Pods', () => {
    const objects = render(on({}, { tiflash: { replicas: 1, storageClaims: [{ resources: { requests: { storage: '1Gi' } } }] }, ticdc: { replicas: 1 }, pump: { replicas: 1, requests: { storage: '1Gi' } }, tiproxy: { replicas: 1 } }));
    const found = policies(objects);
    expect(found.map((p) => p.metadata.name)).toEqual(['demo-discovery', 'demo-pd', 'demo-tikv', 'demo-tiflash', 'demo-tidb', 'demo-ticdc', 'demo-pump', 'demo-tiproxy']);
    for (const p of found) {
      const workload = objects.find((o) => (o.kind === 'StatefulSet' || o.kind === 'Deployment') && o.metadata.name === p.metadata.name)!;
      expect(p.spec.podSelector).toEqual(workload.spec.selector);
      expect(p.spec.policyTypes).toEqual(['Ingress']);
    }
  });

  test('admit SQL from anywhere, the rest from the clusters of the namespace, and metrics from monitoring', () => {
    const byName = Object.fromEntries(policies(render(on({ [METRICS_FROM_ANNOTATION]: 'monitoring' }, { tiproxy: { replicas: 1 } }))).map((p) => [p.metadata.name, p.spec.ingress]));
    expect(byName['demo-tidb']).toEqual([{ ports: tcp(4000) }, { from: [PEERS], ports: tcp(10080) }, monitoring(10080)]);
    expect(byName['demo-tiproxy']).toEqual([{ ports: tcp(6000) }, { from: [PEERS], ports: tcp(3080, 3081) }, monitoring(3080)]);
    expect(byName['demo-pd']).toEqual([{ from: [PEERS], ports: tcp(2379, 2380) }, monitoring(2379)]);
    expect(byName['demo-tikv']).toEqual([{ from: [PEERS], ports: tcp(20160, 20180) }, monitoring(20180)]);
    expect(byName['demo-discovery']).toEqual([{ from: [PEERS], ports: tcp(10261, 10263) }, monitoring(10263)]);
    // Without a metrics namespace, only the cluster's Pods read the metrics.
    const plain = policies(render(on())).find((p) => p.metadata.name === 'demo-pd')!;
    expect(plain.spec.ingress).toEqual([{ from: [PEERS], ports: tcp(2379, 2380) }]);
  });

  test("the TiDB Service's extra ports are SQL-like: open where their targetPort says", () => {
    const objects = render(on({}, { tidb: { replicas: 1, service: { type: 'ClusterIP', additionalPorts: [{ name: 'proxy', port: 3306, targetPort: 4000 }, { name: 'x', port: 4001 }] } } }));
    expect(policies(objects).find((p) => p.metadata.name === 'demo-tidb')!.spec.ingress[0]).toEqual({ ports: tcp(4000, 4001) });
  });

  test("a cluster joining another namespace's cluster admits that namespace's Pods too", () => {
    const joiner = cluster({ cluster: { name: 'base', namespace: 'other' }, pd: undefined }, { name: 'joiner', annotations: { [NETWORK_POLICY_ANNOTATION]: 'true' } });
    const tikv = policies(render(joiner)).find((p) => p.metadata.name === 'joiner-tikv')!;
    expect(tikv.spec.ingress[0].from).toEqual([PEERS, { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'other' } }, ...PEERS }]);
  });

  test.each([
    [{ [NETWORK_POLICY_ANNOTATION]: 'yes' }, {}, `metadata.annotations["${NETWORK_POLICY_ANNOTATION}"] (line 7): expected "true" or "false", got "yes"`],
    [{ [METRICS_FROM_ANNOTATION]: 'monitoring' }, {}, `metadata.annotations["${METRICS_FROM_ANNOTATION}"] (line 7): applies with ${NETWORK_POLICY_ANNOTATION}: "true" only`],
    [{ [NETWORK_POLICY_ANNOTATION]: 'true', [METRICS_FROM_ANNOTATION]: 'Monitoring!' }, {}, `metadata.annotations["${METRICS_FROM_ANNOTATION}"] (line 8): expected the name of a namespace`],
    [{ [NETWORK_POLICY_ANNOTATION]: 'true' }, { acrossK8s: true }, `metadata.annotations["${NETWORK_POLICY_ANNOTATION}"] (line 7): not with spec.acrossK8s`],
  ])('%j is refused at its line', (annotations, spec, message) => {
    const errors = loadTidbClusters(toYaml(cluster(spec, { annotations })), 'tc.yaml').errors.map((e) => e.message);
    expect(errors.join('\n')).toContain(`tc.yaml: document 1: ${message}`);
  });

  test('diff: turning them on for a running cluster, off, or moving the metrics namespace is a network-policy risk', () => {
    const risks = (before: Obj | undefined, after: Obj) =>
      compareModels(buildModel((before ? render(before) : []) as KubeObject[]), buildModel(render(after) as KubeObject[])).clusters.flatMap((c) => c.risks.filter((r) => r.id === 'network-policy').map((r) => r.message));
    expect(risks(cluster(), on({ [METRICS_FROM_ANNOTATION]: 'monitoring' }))).toEqual([expect.stringMatching(/^NetworkPolicies start admitting only the cluster's own ports: .* metrics from monitoring\. A client elsewhere/)]);
    expect(risks(on(), cluster())).toEqual(["The cluster's NetworkPolicies are removed: every port of every component is open to every Pod again."]);
    expect(risks(on({ [METRICS_FROM_ANNOTATION]: 'monitoring' }), on({ [METRICS_FROM_ANNOTATION]: 'prometheus' }))).toEqual([
      'The namespaces the NetworkPolicies admit change from monitoring to prometheus: Pods in a namespace no longer named lose their connections.',
    ]);
    // A new cluster has no client to lose.
    expect(risks(undefined, on())).toEqual([]);
  });
});
