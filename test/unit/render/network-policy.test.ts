/**
 * The opt-in NetworkPolicies: one per component and one for the controller, admitting the SQL ports
 * from anywhere, every other port of the component from the TiDB clusters' Pods of the namespace
 * (and of the namespace `spec.cluster` joins), the metrics ports from Prometheus's namespace, and
 * nothing else; refused where they cannot be right; reported by `diff`.
 */
import { buildModel, compareModels, type KubeObject } from '../../../src/diff';
import { loadInputs } from '../../../src/backup/companions';
import { linkOperations } from '../../../src/backup/link';
import { loadTidbClusters } from '../../../src/tidbcluster/load';
import { METRICS_FROM_ANNOTATION, MONITORING_ANNOTATION, NETWORK_POLICY_ANNOTATION } from '../../../src/tidbcluster/guard-rails';
import { cluster, render, toYaml, type Obj } from '../../support/render';

const policies = (objects: Obj[]) => objects.filter((o) => o.kind === 'NetworkPolicy');
const on = (extra: Record<string, string> = {}, spec: Obj = {}) =>
  cluster(spec, { annotations: { [NETWORK_POLICY_ANNOTATION]: 'true', ...extra } });
const PEERS = {
  podSelector: { matchExpressions: [{ key: 'app.kubernetes.io/managed-by', operator: 'In', values: ['tidb-operator', 'tidb-gitops'] }] },
};
const tcp = (...ports: (number | string)[]) => ports.map((port) => ({ protocol: 'TCP', port }));
const PUMP = { pump: { replicas: 1, requests: { storage: '1Gi' } } };
/** The Pod labels of the operator's tidb-drainer chart (charts/tidb-drainer, drainer-statefulset.yaml) for cluster `demo`. */
const DRAINER = {
  podSelector: {
    matchLabels: { 'app.kubernetes.io/component': 'drainer', 'app.kubernetes.io/instance': 'demo', 'app.kubernetes.io/managed-by': 'Helm' },
  },
};
const errorsOf = (doc: Obj) =>
  loadTidbClusters(toYaml(doc), 'tc.yaml')
    .errors.map((e) => e.message)
    .join('\n');
const monitoring = (...ports: number[]) => ({
  from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
  ports: tcp(...ports),
});

describe('network policies', () => {
  test('are off by default', () => {
    expect(policies(render(cluster()))).toEqual([]);
  });

  test('one per component and one for the controller, each selecting exactly its Pods', () => {
    const objects = render(
      on(
        {},
        {
          tiflash: { replicas: 1, storageClaims: [{ resources: { requests: { storage: '1Gi' } } }] },
          ticdc: { replicas: 1 },
          pump: { replicas: 1, requests: { storage: '1Gi' } },
          tiproxy: { replicas: 1 },
        },
      ),
    );
    const found = policies(objects);
    expect(found.map((p) => p.metadata.name)).toEqual([
      'demo-discovery',
      'demo-pd',
      'demo-tikv',
      'demo-tiflash',
      'demo-tidb',
      'demo-ticdc',
      'demo-pump',
      'demo-tiproxy',
    ]);
    for (const p of found) {
      const workload = objects.find((o) => (o.kind === 'StatefulSet' || o.kind === 'Deployment') && o.metadata.name === p.metadata.name)!;
      expect(p.spec.podSelector).toEqual(workload.spec.selector);
      expect(p.spec.policyTypes).toEqual(['Ingress']);
    }
  });

  test('admit SQL from anywhere, the rest from the clusters of the namespace, and metrics from monitoring', () => {
    const byName = Object.fromEntries(
      policies(render(on({ [METRICS_FROM_ANNOTATION]: 'monitoring' }, { tiproxy: { replicas: 1 } }))).map((p) => [
        p.metadata.name,
        p.spec.ingress,
      ]),
    );
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
    const objects = render(
      on(
        {},
        {
          tidb: {
            replicas: 1,
            service: {
              type: 'ClusterIP',
              additionalPorts: [
                { name: 'proxy', port: 3306, targetPort: 4000 },
                { name: 'x', port: 4001 },
              ],
            },
          },
        },
      ),
    );
    expect(policies(objects).find((p) => p.metadata.name === 'demo-tidb')!.spec.ingress[0]).toEqual({ ports: tcp(4000, 4001) });
  });

  test("a cluster joining another namespace's cluster admits that namespace's Pods too", () => {
    const joiner = cluster(
      { cluster: { name: 'base', namespace: 'other' }, pd: undefined },
      { name: 'joiner', annotations: { [NETWORK_POLICY_ANNOTATION]: 'true' } },
    );
    const tikv = policies(render(joiner)).find((p) => p.metadata.name === 'joiner-tikv')!;
    expect(tikv.spec.ingress[0].from).toEqual([
      PEERS,
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'other' } }, ...PEERS },
    ]);
  });

  test.each([
    [
      { [NETWORK_POLICY_ANNOTATION]: 'yes' },
      {},
      `metadata.annotations["${NETWORK_POLICY_ANNOTATION}"] (line 7): expected "true" or "false", got "yes"`,
    ],
    [
      { [METRICS_FROM_ANNOTATION]: 'monitoring' },
      {},
      `metadata.annotations["${METRICS_FROM_ANNOTATION}"] (line 7): applies with ${NETWORK_POLICY_ANNOTATION}: "true" only`,
    ],
    [
      { [NETWORK_POLICY_ANNOTATION]: 'true', [METRICS_FROM_ANNOTATION]: 'Monitoring!' },
      {},
      `metadata.annotations["${METRICS_FROM_ANNOTATION}"] (line 8): expected the name of a namespace`,
    ],
    [
      { [NETWORK_POLICY_ANNOTATION]: 'true' },
      { acrossK8s: true },
      `metadata.annotations["${NETWORK_POLICY_ANNOTATION}"] (line 7): not with spec.acrossK8s`,
    ],
  ])('%j is refused at its line', (annotations, spec, message) => {
    const errors = loadTidbClusters(toYaml(cluster(spec, { annotations })), 'tc.yaml').errors.map((e) => e.message);
    expect(errors.join('\n')).toContain(`tc.yaml: document 1: ${message}`);
  });

  test("admit the operator's chart's Drainer, with binlog, where it connects: PD's client port, TiKV's server port, the Pumps", () => {
    const byName = Object.fromEntries(policies(render(on({}, PUMP))).map((p) => [p.metadata.name, p.spec.ingress]));
    expect(byName['demo-pd']).toEqual([
      { from: [PEERS], ports: tcp(2379, 2380) },
      { from: [DRAINER], ports: tcp(2379) },
    ]);
    expect(byName['demo-tikv']).toEqual([
      { from: [PEERS], ports: tcp(20160, 20180) },
      { from: [DRAINER], ports: tcp(20160) },
    ]);
    expect(byName['demo-pump']).toEqual([
      { from: [PEERS], ports: tcp(8250) },
      { from: [DRAINER], ports: tcp(8250) },
    ]);
    expect(byName['demo-tidb']).toEqual([{ ports: tcp(4000) }, { from: [PEERS], ports: tcp(10080) }]);
    expect(byName['demo-discovery']).toEqual([{ from: [PEERS], ports: tcp(10261, 10263) }]);
    // Without Pump there is no binlog for a Drainer to read.
    expect(policies(render(on())).find((p) => p.metadata.name === 'demo-pd')!.spec.ingress).toEqual([
      { from: [PEERS], ports: tcp(2379, 2380) },
    ]);
    // A cluster joining another reaches that cluster's Drainer from its namespace: it reads this one's stores and Pumps too.
    const joiner = cluster(
      { cluster: { name: 'base', namespace: 'other' }, pd: undefined, ...PUMP },
      { name: 'joiner', annotations: { [NETWORK_POLICY_ANNOTATION]: 'true' } },
    );
    const pump = policies(render(joiner)).find((p) => p.metadata.name === 'joiner-pump')!;
    const chart = (instance: string) => ({ matchLabels: { ...DRAINER.podSelector.matchLabels, 'app.kubernetes.io/instance': instance } });
    expect(pump.spec.ingress[1]).toEqual({
      from: [
        { podSelector: chart('joiner') },
        { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'other' } }, podSelector: chart('base') },
      ],
      ports: tcp(8250),
    });
  });

  test.each([
    [{ hostNetwork: true }, 'spec.hostNetwork (line 20)', 'pd, tikv, tidb and the controller (discovery)'],
    [{ tikv: { replicas: 3, requests: { storage: '1Gi' }, hostNetwork: true } }, 'spec.tikv.hostNetwork (line 18)', 'tikv'],
    [
      { hostNetwork: true, pd: { replicas: 3, requests: { storage: '1Gi' }, hostNetwork: false }, discovery: { hostNetwork: false } },
      'spec.hostNetwork (line 21)',
      'tikv and tidb',
    ],
  ])("fail with Pods on their nodes' network (%j): their address is the node's, which no Pod selector names", (spec, where, components) => {
    const message = errorsOf(on({}, spec));
    expect(message).toContain(
      `tc.yaml: document 1: ${where}: not with ${NETWORK_POLICY_ANNOTATION}: "true": it puts the Pods of ${components} on their nodes' network`,
    );
    expect(message).toContain('Kubernetes leaves NetworkPolicy undefined for such Pods');
    expect(message).toContain('Turn hostNetwork off, or turn tidb-gitops.io/network-policy off');
    // Without network policies, hostNetwork is the user's to choose.
    expect(render(cluster(spec)).length).toBeGreaterThan(0);
  });

  test('fail with monitoring on and no metrics-from: Prometheus could not scrape; its own namespace names a Prometheus beside the cluster', () => {
    const unscraped =
      'set tidb-gitops.io/metrics-from: <the namespace Prometheus runs in>: the network policies admit the metrics ports only from that namespace';
    expect(errorsOf(on({ [MONITORING_ANNOTATION]: 'true' }))).toContain(
      `tc.yaml: document 1: metadata.annotations["${NETWORK_POLICY_ANNOTATION}"] (line 7): with monitoring on (${MONITORING_ANNOTATION}: "true"), ${unscraped}`,
    );
    expect(errorsOf(on({ [MONITORING_ANNOTATION]: 'true' }))).toContain(
      "When Prometheus runs in the cluster's namespace, set tidb-gitops.io/metrics-from: ns",
    );
    // A TidbMonitor beside the cluster turns monitoring on too: reported at the cluster, which is where the fix goes.
    const monitor = {
      apiVersion: 'pingcap.com/v1alpha1',
      kind: 'TidbMonitor',
      metadata: { name: 'mon', namespace: 'ns' },
      spec: {
        clusters: [{ name: 'demo' }],
        ...Object.fromEntries(['initializer', 'prometheus', 'reloader'].map((c) => [c, { baseImage: `x/${c}`, version: 'v1' }])),
      },
    };
    const link = (tc: Obj) => {
      const loaded = loadInputs([toYaml(tc), toYaml(monitor)].join('---\n'), 'in.yaml');
      return [...loaded.errors.map((e) => e.message), ...linkOperations(loaded.clusters, loaded.documents).errors];
    };
    expect(link(on())).toEqual([
      `in.yaml: document 1: metadata.annotations["${NETWORK_POLICY_ANNOTATION}"] (line 7): with monitoring on (the TidbMonitor "mon" at in.yaml: document 2), ${unscraped} and from the TiDB clusters' own Pods, so without it Prometheus could not scrape the cluster. When Prometheus runs in the cluster's namespace, set tidb-gitops.io/metrics-from: ns`,
    ]);
    expect(link(on({ [METRICS_FROM_ANNOTATION]: 'monitoring' }))).toEqual([]);
    // Prometheus in the cluster's own namespace: that namespace admits it.
    const beside = policies(render(on({ [MONITORING_ANNOTATION]: 'true', [METRICS_FROM_ANNOTATION]: 'ns' }))).find(
      (p) => p.metadata.name === 'demo-tikv',
    )!;
    expect(beside.spec.ingress[1]).toEqual({
      from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ns' } } }],
      ports: tcp(20180),
    });
  });

  test('diff: turning them on for a running cluster, off, or moving the metrics namespace is a network-policy risk', () => {
    const risks = (before: Obj | undefined, after: Obj) =>
      compareModels(buildModel((before ? render(before) : []) as KubeObject[]), buildModel(render(after) as KubeObject[])).clusters.flatMap(
        (c) => c.risks.filter((r) => r.id === 'network-policy').map((r) => r.message),
      );
    expect(risks(cluster(), on({ [METRICS_FROM_ANNOTATION]: 'monitoring' }))).toEqual([
      expect.stringMatching(
        /^NetworkPolicies start admitting only the cluster's own ports: .* metrics from monitoring\. A client elsewhere/,
      ),
    ]);
    expect(risks(on(), cluster())).toEqual([
      "The cluster's NetworkPolicies are removed: every port of every component is open to every Pod again.",
    ]);
    expect(risks(on({ [METRICS_FROM_ANNOTATION]: 'monitoring' }), on({ [METRICS_FROM_ANNOTATION]: 'prometheus' }))).toEqual([
      'The namespaces the NetworkPolicies admit change from monitoring to prometheus: Pods in a namespace no longer named lose their connections.',
    ]);
    // A new cluster has no client to lose.
    expect(risks(undefined, on())).toEqual([]);
  });
});
