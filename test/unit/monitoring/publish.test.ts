/**
 * Monitoring: a TidbMonitor (or `tidb-gitops.io/monitoring: "true"`) renders a PodMonitor per
 * component and for the controller, with the operator's scrape labels and the cluster's TLS, and a Job
 * that publishes PingCAP's rules and dashboards for the cluster's release; each field of an operator
 * user's TidbMonitor maps, is a server setting with no effect here, or is refused by path and line.
 * The publishing itself turns the image's files into a PrometheusRule scoped to the cluster (checked
 * by the real promtool) and dashboard ConfigMaps for Grafana's sidecar, split when too large.
 * The rule and dashboard files here are written for the tests, in the image's format.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { buildModel, compareModels, type KubeObject } from '../../../src/diff';
import { loadManifests } from '../../../src/diff/load';
import { loadInputs } from '../../../src/backup/companions';
import { linkOperations } from '../../../src/backup/link';
import { hasMatcherEverywhere } from '../../../src/base/promql';
import { MAX_DASHBOARD_BYTES, publish, splitDashboard, type AssetFile } from '../../../src/monitoring/publish';
import { renderClusters } from '../../../src/render/render';
import type { MonitoringPublishInfo } from '../../../src/tidbcluster/contract';
import { cluster, find, toYaml, type Obj } from '../../support/render';
import { assertValidK8sObjects, SCHEMA_MINORS } from '../../support/k8s-schema';
import { checkRules } from '../../support/prometheus';
import { PROMETHEUS, requires } from '../../support/requires';

/** The operator's `examples/basic/tidb-monitor.yaml`, as operator users have it (namespaced here). */
const operatorMonitor = (spec: Obj = {}): Obj => ({
  apiVersion: 'pingcap.com/v1alpha1',
  kind: 'TidbMonitor',
  metadata: { name: 'basic', namespace: 'ns' },
  spec: {
    replicas: 1,
    clusters: [{ name: 'demo' }],
    prometheus: { baseImage: 'prom/prometheus', version: 'v2.27.1' },
    grafana: { baseImage: 'grafana/grafana', version: '7.5.11' },
    initializer: { baseImage: 'pingcap/tidb-monitor-initializer', version: 'v8.5.7' },
    reloader: { baseImage: 'pingcap/tidb-monitor-reloader', version: 'v1.0.1' },
    prometheusReloader: { baseImage: 'quay.io/prometheus-operator/prometheus-config-reloader', version: 'v0.49.0' },
    imagePullPolicy: 'IfNotPresent',
    ...spec,
  },
});

const MONITORED = { 'tidb-gitops.io/monitoring': 'true' };
const ALL = {
  tiflash: { replicas: 1, storageClaims: [{ resources: { requests: { storage: '10Gi' } } }] },
  ticdc: { replicas: 2 },
  pump: { replicas: 1, requests: { storage: '1Gi' } },
  tiproxy: { replicas: 1 },
};

function load(docs: Obj[]) {
  const loaded = loadInputs(docs.map((d) => toYaml(d)).join('---\n'), 'in.yaml');
  const linked = linkOperations(loaded.clusters, loaded.documents);
  return { loaded, linked, errors: [...loaded.errors.map((e) => e.message), ...linked.errors].join('\n') };
}

function renderAll(docs: Obj[], kube = '1.31'): Obj[] {
  const { loaded, linked, errors } = load(docs);
  if (errors) throw new Error(errors);
  const objects = renderClusters(
    loaded.clusters.map((c) => c.resolved),
    linked.operations,
  ).flatMap((r) => r.objects);
  assertValidK8sObjects(objects, kube);
  return objects;
}

const monitors = (objects: Obj[]) => objects.filter((o) => o.kind === 'PodMonitor');
const job = (objects: Obj[]) => objects.find((o) => o.kind === 'Job')!;
const info = (objects: Obj[]): MonitoringPublishInfo =>
  JSON.parse(job(objects).spec.template.spec.containers[0].env.find((e: Obj) => e.name === 'TIDB_GITOPS_MONITORING').value);

describe('PodMonitors', () => {
  test('one per component and one for the controller, selecting exactly its Pods, at the operator ports and paths', () => {
    const objects = renderAll([cluster(ALL, { annotations: MONITORED })]);
    const byName = Object.fromEntries(monitors(objects).map((m) => [m.metadata.name, m]));
    expect(Object.keys(byName).sort()).toEqual([
      'demo-discovery',
      'demo-pd',
      'demo-pump',
      'demo-ticdc',
      'demo-tidb',
      'demo-tiflash',
      'demo-tikv',
      'demo-tiproxy',
    ]);
    const endpoints = (name: string) => byName[name].spec.podMetricsEndpoints.map((e: Obj) => [e.port, e.path, e.scheme]);
    expect(endpoints('demo-pd')).toEqual([['client', '/metrics', 'http']]);
    expect(endpoints('demo-tidb')).toEqual([['status', '/metrics', 'http']]);
    expect(endpoints('demo-ticdc')).toEqual([['ticdc', '/metrics', 'http']]);
    expect(endpoints('demo-pump')).toEqual([['pump', '/metrics', 'http']]);
    expect(endpoints('demo-tiproxy')).toEqual([['tiproxy-api', '/api/metrics', 'http']]);
    expect(endpoints('demo-discovery')).toEqual([['metrics', '/metrics', 'http']]);
    for (const m of monitors(objects)) {
      const component = m.metadata.name === 'demo-discovery' ? 'discovery' : m.metadata.name.slice('demo-'.length);
      expect(m.metadata.namespace).toBe('ns');
      expect(m.spec.jobLabel).toBe('app.kubernetes.io/component');
      expect(m.spec.selector).toEqual({
        matchLabels: {
          'app.kubernetes.io/name': 'tidb-cluster',
          'app.kubernetes.io/managed-by': 'tidb-operator',
          'app.kubernetes.io/instance': 'demo',
          'app.kubernetes.io/component': component,
        },
      });
      // The selector takes the component's Pods: the same labels its StatefulSet's (or Deployment's) Pods carry.
      const owner = objects.find(
        (o) =>
          (o.kind === 'StatefulSet' || o.kind === 'Deployment') &&
          o.spec.template.metadata.labels['app.kubernetes.io/component'] === component,
      )!;
      expect(owner.spec.template.metadata.labels).toMatchObject(m.spec.selector.matchLabels);
    }
  });

  test("the operator's labels: instance the Pod, component, cluster, tidb_cluster <namespace>-<cluster>", () => {
    const objects = renderAll([cluster({}, { annotations: MONITORED })]);
    const relabelings = find(objects, 'PodMonitor', 'demo-tidb').spec.podMetricsEndpoints[0].relabelings;
    expect(relabelings).toEqual([
      { sourceLabels: ['__meta_kubernetes_pod_name'], targetLabel: 'instance', action: 'replace' },
      { targetLabel: 'component', replacement: 'tidb', action: 'replace' },
      { targetLabel: 'cluster', replacement: 'demo', action: 'replace' },
      { sourceLabels: ['__meta_kubernetes_namespace'], targetLabel: 'tidb_cluster', replacement: '$1-demo', action: 'replace' },
      { sourceLabels: ['__meta_kubernetes_namespace'], targetLabel: 'kubernetes_namespace', action: 'replace' },
    ]);
  });

  test("ports a Pod does not declare (TiKV's status port, TiFlash's proxy) are reached on the Pod's IP", () => {
    const objects = renderAll([cluster(ALL, { annotations: MONITORED })]);
    const tikv = find(objects, 'PodMonitor', 'demo-tikv').spec.podMetricsEndpoints;
    expect(tikv).toHaveLength(1);
    expect(tikv[0].port).toBe('server');
    expect(tikv[0].relabelings.slice(0, 2)).toEqual([
      {
        sourceLabels: ['__meta_kubernetes_pod_ip'],
        regex: '([^:]+)',
        targetLabel: '__address__',
        replacement: '$1:20180',
        action: 'replace',
      },
      {
        sourceLabels: ['__meta_kubernetes_pod_ip'],
        regex: '(.+:.+)',
        targetLabel: '__address__',
        replacement: '[$1]:20180',
        action: 'replace',
      },
    ]);
    const tiflash = find(objects, 'PodMonitor', 'demo-tiflash').spec.podMetricsEndpoints;
    expect(tiflash.map((e: Obj) => e.port)).toEqual(['metrics', 'metrics']);
    expect(tiflash[0].relabelings[0].targetLabel).toBe('instance');
    expect(tiflash[1].relabelings[0].replacement).toBe('$1:20292');
    // With the named status port, TiKV's is scraped by name.
    const named = renderAll([
      cluster({ tikv: { replicas: 3, requests: { storage: '1Gi' }, enableNamedStatusPort: true } }, { annotations: MONITORED }),
    ]);
    const endpoint = find(named, 'PodMonitor', 'demo-tikv').spec.podMetricsEndpoints[0];
    expect(endpoint.port).toBe('status');
    expect(endpoint.relabelings[0].targetLabel).toBe('instance');
  });

  test('with cluster TLS: https with the cluster client certificate and the peer name; TiProxy unverified; the controller plain', () => {
    const objects = renderAll([cluster({ tlsCluster: { enabled: true }, ...ALL }, { annotations: MONITORED })]);
    const pd = find(objects, 'PodMonitor', 'demo-pd').spec.podMetricsEndpoints[0];
    expect(pd.scheme).toBe('https');
    expect(pd.tlsConfig).toEqual({
      ca: { secret: { name: 'demo-cluster-client-secret', key: 'ca.crt' } },
      cert: { secret: { name: 'demo-cluster-client-secret', key: 'tls.crt' } },
      keySecret: { name: 'demo-cluster-client-secret', key: 'tls.key' },
      serverName: 'demo-pd-peer.ns.svc',
    });
    // The names tidb-operator's TLS guide puts in Pump's certificate: its Pods only, by wildcard.
    const pumpSans = ['*.demo-pump', '*.demo-pump.ns', '*.demo-pump.ns.svc'];
    const pumpName = find(objects, 'PodMonitor', 'demo-pump').spec.podMetricsEndpoints[0].tlsConfig.serverName;
    expect(pumpName).toBe('demo-pump-0.demo-pump.ns.svc');
    expect(
      pumpSans.some(
        (san) => san.startsWith('*.') && pumpName.indexOf('.') > 0 && pumpName.slice(pumpName.indexOf('.') + 1) === san.slice(2),
      ),
    ).toBe(true);
    expect(find(objects, 'PodMonitor', 'demo-tiproxy').spec.podMetricsEndpoints[0]).toMatchObject({
      scheme: 'https',
      tlsConfig: { insecureSkipVerify: true },
    });
    const controller = find(objects, 'PodMonitor', 'demo-discovery').spec.podMetricsEndpoints[0];
    expect(controller.scheme).toBe('http');
    expect(controller.tlsConfig).toBeUndefined();
  });

  test('valid for every supported Kubernetes version, with the labels of tidb-gitops.io/monitoring-labels', () => {
    for (const minor of SCHEMA_MINORS) {
      const objects = renderAll(
        [cluster(ALL, { annotations: { ...MONITORED, 'tidb-gitops.io/monitoring-labels': 'release=kube-prometheus-stack, team=db' } })],
        `1.${minor}`,
      );
      for (const o of [...monitors(objects), job(objects)])
        expect(o.metadata.labels).toMatchObject({ release: 'kube-prometheus-stack', team: 'db' });
      expect(info(objects).labels).toEqual({ release: 'kube-prometheus-stack', team: 'db' });
    }
  });

  test('none without a TidbMonitor or the annotation', () => {
    const objects = renderAll([cluster(ALL)]);
    expect(objects.filter((o) => ['PodMonitor', 'Job'].includes(o.kind))).toEqual([]);
  });
});

describe('the publishing Job', () => {
  test("runs the initializer image of the cluster's release, then the controller image, with its own narrow rights", () => {
    const objects = renderAll([cluster({}, { annotations: MONITORED })]);
    const j = job(objects);
    expect(j.metadata.name).toMatch(/^demo-monitoring-[0-9a-f]{7}$/);
    expect(j.spec.ttlSecondsAfterFinished).toBeUndefined();
    const pod = j.spec.template.spec;
    expect(pod.serviceAccountName).toBe('demo-monitoring');
    expect(pod.initContainers[0]).toMatchObject({
      image: 'pingcap/tidb-monitor-initializer:v8.5.7',
      command: ['/bin/sh', '-c', 'cp /tmp/*.rules.yml /tmp/*.json /assets/'],
    });
    expect(pod.containers[0].command).toEqual(['tidb-gitops', 'publish-monitoring']);
    expect(pod.containers[0].image).toBe(find(objects, 'Deployment', 'demo-discovery').spec.template.spec.containers[0].image);
    // Not a server Pod of the cluster: the controller reads those by managed-by tidb-operator.
    expect(j.spec.template.metadata.labels['app.kubernetes.io/managed-by']).toBe('tidb-gitops');
    expect(info(objects)).toEqual({
      cluster: 'demo',
      image: 'pingcap/tidb-monitor-initializer:v8.5.7',
      components: ['pd', 'tikv', 'tidb'],
      rules: true,
      dashboards: true,
      labels: {},
      assets: '/assets',
    });
    expect(find(objects, 'Role', 'demo-monitoring').rules).toEqual([
      { apiGroups: ['batch'], resources: ['jobs'], resourceNames: [j.metadata.name], verbs: ['get'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'patch'] },
      { apiGroups: ['monitoring.coreos.com'], resources: ['prometheusrules'], verbs: ['create'] },
      { apiGroups: ['monitoring.coreos.com'], resources: ['prometheusrules'], resourceNames: ['demo-alert-rules'], verbs: ['patch'] },
    ]);
  });

  test('a new release is a new Job; the same input, the same Job', () => {
    const name = (version: string) => job(renderAll([cluster({ version }, { annotations: MONITORED })])).metadata.name;
    expect(name('v8.5.7')).toBe(name('v8.5.7'));
    expect(name('v8.5.7')).not.toBe(name('v8.5.6'));
  });
});

describe("an operator user's TidbMonitor", () => {
  test('the basic example maps: its initializer image, dashboards (grafana set), no rules (enableAlertRules unset)', () => {
    const objects = renderAll([cluster({ tlsCluster: { enabled: true } }), operatorMonitor()]);
    expect(
      monitors(objects)
        .map((m) => m.metadata.name)
        .sort(),
    ).toEqual(['demo-discovery', 'demo-pd', 'demo-tidb', 'demo-tikv']);
    expect(info(objects)).toMatchObject({ image: 'pingcap/tidb-monitor-initializer:v8.5.7', rules: false, dashboards: true });
    expect(find(objects, 'Role', 'demo-monitoring').rules.some((r: Obj) => r.resources.includes('prometheusrules'))).toBe(false);
  });

  test("its Pod settings go to the Job's Pod; without a version the cluster's release is used", () => {
    const objects = renderAll([
      cluster({ version: 'v8.1.2' }),
      operatorMonitor({
        enableAlertRules: true,
        initializer: { baseImage: 'registry.example.com/pingcap/tidb-monitor-initializer', requests: { cpu: '50m' } },
        imagePullSecrets: [{ name: 'pull' }],
        nodeSelector: { pool: 'ops' },
        tolerations: [{ key: 'ops', operator: 'Exists' }],
        labels: { team: 'db' },
      }),
    ]);
    const pod = job(objects).spec.template;
    expect(pod.spec.initContainers[0]).toMatchObject({
      image: 'registry.example.com/pingcap/tidb-monitor-initializer:v8.1.2',
      imagePullPolicy: 'IfNotPresent',
      resources: { requests: { cpu: '50m' } },
    });
    expect(pod.spec).toMatchObject({
      imagePullSecrets: [{ name: 'pull' }],
      nodeSelector: { pool: 'ops' },
      tolerations: [{ key: 'ops', operator: 'Exists' }],
    });
    expect(pod.metadata.labels.team).toBe('db');
    expect(info(objects).rules).toBe(true);
  });

  test('each field with no counterpart is refused by path and line, all at once', () => {
    const { errors } = load([
      cluster(),
      operatorMonitor({
        alertmanagerURL: 'alertmanager:9093',
        persistent: true,
        storage: '10G',
        prometheus: { baseImage: 'prom/prometheus', version: 'v2.27.1', service: { type: 'NodePort' }, reserveDays: 12 },
        grafana: { baseImage: 'grafana/grafana', version: '7.5.11', usernameSecret: { name: 'g', key: 'u' } },
        initializer: { baseImage: 'pingcap/tidb-monitor-initializer', version: 'v8.5.7', envs: { A: 'b' } },
      }),
    ]);
    const lines = errors.split('\n');
    if (lines.length !== 7) throw new Error(errors);
    for (const path of [
      'spec.alertmanagerURL',
      'spec.persistent',
      'spec.storage',
      'spec.prometheus.service',
      'spec.prometheus.reserveDays',
      'spec.grafana.usernameSecret',
      'spec.initializer.envs',
    ]) {
      expect(
        lines.some((l) => l.startsWith('in.yaml: document 2: ') && l.includes(`${path} (line `) && l.includes('not carried over')),
      ).toBe(true);
    }
    expect(errors).toContain('for the alert rules, set enableAlertRules: true');
    expect(lines).toHaveLength(7);
  });

  test('its clusters must be in the input, each monitored once, and not turned off', () => {
    expect(load([cluster(), operatorMonitor({ clusters: [{ name: 'other' }] })]).errors).toMatch(
      /spec\.clusters\[0\]\.name \(line \d+\): no TidbCluster "other" in namespace ns in the input \(have: ns\/demo\)/,
    );
    const twice = load([cluster(), operatorMonitor(), { ...operatorMonitor(), metadata: { name: 'second', namespace: 'ns' } }]).errors;
    expect(twice).toMatch(/already monitored by the TidbMonitor "basic"/);
    expect(load([cluster({}, { annotations: { 'tidb-gitops.io/monitoring': 'false' } }), operatorMonitor()]).errors).toMatch(
      /turns monitoring off/,
    );
    expect(load([cluster(), operatorMonitor({ clusters: [] })]).errors).toMatch(/spec\.clusters.*no cluster to monitor/);
  });

  test('bad annotations are refused with their path', () => {
    const bad = load([
      cluster({}, { annotations: { 'tidb-gitops.io/monitoring': 'yes', 'tidb-gitops.io/monitoring-labels': 'release' } }),
    ]).errors;
    expect(bad).toMatch(/metadata\.annotations\["tidb-gitops\.io\/monitoring"\].*expected "true" or "false", got "yes"/);
    expect(bad).toMatch(/metadata\.annotations\["tidb-gitops\.io\/monitoring-labels"\].*got "release"/);
  });
});

// ---------------------------------------------------------------------------------------------
// Publishing, from files in the image's format.

const RULES = `groups:
  - name: alert.rules
    rules:
      - alert: TiKV_server_is_down
        expr: probe_success{group="tikv"} == 0 or up{job="tikv"} == 0
        for: 1m
        labels:
          env: ENV_LABELS_ENV
          level: emergency
          expr: probe_success{group="tikv"} == 0 or up{job="tikv"} == 0
        annotations:
          description: 'cluster: ENV_LABELS_ENV, instance: {{ $labels.instance }}, values:{{ $value }}'
          summary: TiKV server is down
      - alert: TiKV_write_stall
        expr: delta(tikv_engine_write_stall[10m]) > 10
        for: 1m
        labels:
          env: ENV_LABELS_ENV
          level: critical
`;
const RECORDING = `groups:
  - name: tikv_accelerate
    rules:
      - record: tikv_grpc_msg_duration_seconds:1m
        expr: sum(rate(tikv_grpc_msg_duration_seconds_bucket{instance=~".*"}[1m])) by (le, type)
`;
const dashboard = (title: string, panels: Obj[] = []) =>
  JSON.stringify({
    __inputs: [{ name: 'DS_TEST-CLUSTER', type: 'datasource', pluginId: 'prometheus' }],
    id: 7,
    uid: 'abc123',
    title: `Test-Cluster-${title}`,
    panels: [{ type: 'timeseries', datasource: 'tidb-cluster', targets: [{ expr: 'sum(up{tidb_cluster="$tidb_cluster"})' }] }, ...panels],
    templating: {
      list: [
        {
          name: 'k8s_cluster',
          type: 'query',
          datasource: '${DS_TEST-CLUSTER}',
          query: 'label_values(pd_cluster_status, k8s_cluster)',
          hide: 2,
        },
        {
          name: 'tidb_cluster',
          type: 'query',
          datasource: 'tidb-cluster',
          query: 'label_values(pd_cluster_status{k8s_cluster="$k8s_cluster"}, tidb_cluster)',
          hide: 2,
        },
        {
          name: 'instance',
          type: 'query',
          datasource: 'tidb-cluster',
          query: 'label_values(tikv_engine_size_bytes{tidb_cluster="$tidb_cluster"}, instance)',
        },
      ],
    },
  });

const files = (extra: AssetFile[] = []): AssetFile[] => [
  { name: 'tikv.rules.yml', text: RULES },
  { name: 'tikv.accelerate.rules.yml', text: RECORDING },
  { name: 'tiflash.rules.yml', text: RULES.replace(/tikv/g, 'tiflash') },
  { name: 'lightning.rules.yml', text: RULES },
  { name: 'tikv_summary.json', text: dashboard('TiKV-Summary') },
  { name: 'tiflash_summary.json', text: dashboard('TiFlash-Summary') },
  { name: 'DM-Monitor-Standard.json', text: dashboard('DM-Standard') },
  ...extra,
];
const publishInfo: MonitoringPublishInfo = {
  cluster: 'demo',
  image: 'pingcap/tidb-monitor-initializer:v8.5.7',
  components: ['pd', 'tikv', 'tidb'],
  rules: true,
  dashboards: true,
  labels: { release: 'prom' },
  assets: '/assets',
};
const OWNER = { name: 'demo-monitoring-abcdef0', uid: '00000000-0000-0000-0000-000000000001' };

describe('publishing the rules', () => {
  const out = publish(files(), publishInfo, 'ns', OWNER);
  const rule = out.rules as Obj;

  test("one PrometheusRule, owned by the Job, with a group per file of the cluster's components", () => {
    assertValidK8sObjects([rule], '1.32');
    expect(rule.metadata).toMatchObject({
      name: 'demo-alert-rules',
      namespace: 'ns',
      labels: { release: 'prom', 'app.kubernetes.io/component': 'monitoring' },
      annotations: { 'tidb-gitops.io/source': publishInfo.image },
    });
    expect(rule.metadata.ownerReferences).toEqual([
      { apiVersion: 'batch/v1', kind: 'Job', name: OWNER.name, uid: OWNER.uid, blockOwnerDeletion: false },
    ]);
    expect(rule.spec.groups.map((g: Obj) => g.name)).toEqual(['tikv_accelerate', 'tikv']);
    expect(out.skipped).toEqual(
      [
        'lightning.rules.yml: not a rule file of a component tidb-gitops renders',
        'tiflash.rules.yml: the cluster runs no tiflash',
        'DM-Monitor-Standard.json: not a dashboard of a component tidb-gitops renders',
        'tiflash_summary.json: the cluster runs no tiflash',
      ].sort((a, b) => (a.split(':')[0] < b.split(':')[0] ? -1 : 1)),
    );
  });

  test('scoped to the cluster: every selector, every rule label, and the cluster named in place of ENV_LABELS_ENV', () => {
    const alerts = rule.spec.groups.find((g: Obj) => g.name === 'tikv').rules;
    expect(alerts[0].expr).toBe('probe_success{group="tikv",tidb_cluster="ns-demo"} == 0 or up{job="tikv",tidb_cluster="ns-demo"} == 0');
    expect(alerts[0].labels).toEqual({ env: 'ns-demo', level: 'emergency', expr: alerts[0].expr, tidb_cluster: 'ns-demo' });
    expect(alerts[0].annotations.description).toBe('cluster: ns-demo, instance: {{ $labels.instance }}, values:{{ $value }}');
    for (const g of rule.spec.groups) for (const r of g.rules) expect(hasMatcherEverywhere(r.expr, 'tidb_cluster', 'ns-demo')).toBe(true);
    // Two clusters' recordings never write the same series.
    const recording = rule.spec.groups.find((g: Obj) => g.name === 'tikv_accelerate').rules[0];
    expect(recording.labels).toEqual({ tidb_cluster: 'ns-demo' });
  });

  // Debian's promtool; where it is missing, the line of requires() says so. A promtool that cannot be
  // started or fails comes back as its output, never as the spawn error, which refers to itself (its
  // `error` property) and which Jest's worker cannot pass on: the whole file was lost that way.
  requires(PROMETHEUS).test(
    'the real promtool takes them',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'rules-'));
      try {
        const file = join(dir, 'rules.yml');
        writeFileSync(file, stringify({ groups: rule.spec.groups }));
        // checkRules gives promtool 60 s.
        expect(await checkRules([file])).toEqual({ ok: true, output: expect.stringContaining('SUCCESS: 3 rules found') });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    90_000,
  );

  test('none without rules; a file that is not YAML is named', () => {
    expect(publish(files(), { ...publishInfo, rules: false }, 'ns', OWNER).rules).toBeUndefined();
    expect(() => publish([{ name: 'tikv.rules.yml', text: 'groups: [' }], publishInfo, 'ns', OWNER)).toThrow(/^tikv\.rules\.yml: not YAML/);
    expect(() =>
      publish(
        [{ name: 'tikv.rules.yml', text: 'groups:\n  - name: x\n    rules:\n      - alert: A\n        expr: sum(up\n' }],
        publishInfo,
        'ns',
        OWNER,
      ),
    ).toThrow(/^tikv\.rules\.yml: A: /);
  });
});

describe('publishing the dashboards', () => {
  const out = publish(files(), publishInfo, 'ns', OWNER);

  test("a ConfigMap per dashboard of the cluster's components, labelled for Grafana's sidecar", () => {
    assertValidK8sObjects(out.dashboards, '1.32');
    expect(out.dashboards.map((d: Obj) => d.metadata.name)).toEqual(['demo-dashboard-tikv-summary']);
    const cm = out.dashboards[0] as Obj;
    expect(cm.metadata.labels).toMatchObject({ grafana_dashboard: '1', release: 'prom' });
    expect(Object.keys(cm.data)).toEqual(['ns-demo-tikv-summary.json']);
  });

  test('its own uid and title, the datasource chosen in Grafana, tidb_cluster fixed to the cluster', () => {
    const d = JSON.parse(Object.values((out.dashboards[0] as Obj).data)[0] as string);
    expect(d.title).toBe('TiKV-Summary · ns/demo');
    expect(d.id).toBeUndefined();
    expect(d.__inputs).toBeUndefined();
    expect(d.uid).toMatch(/^tg[0-9a-f]{22}$/);
    expect(d.panels[0].datasource).toBe('${datasource}');
    expect(d.templating.list.map((v: Obj) => [v.name, v.type])).toEqual([
      ['datasource', 'datasource'],
      ['k8s_cluster', 'constant'],
      ['tidb_cluster', 'constant'],
      ['instance', 'query'],
    ]);
    expect(d.templating.list[2].query).toBe('ns-demo');
    expect(d.templating.list[3].datasource).toBe('${datasource}');
    const other = JSON.parse(
      Object.values((publish(files(), { ...publishInfo, cluster: 'other' }, 'ns', OWNER).dashboards[0] as Obj).data)[0] as string,
    );
    expect(other.uid).not.toBe(d.uid);
  });

  test('one too large for a ConfigMap is split at its rows, each part a dashboard that fits', () => {
    const panel = (i: number) => ({
      type: 'timeseries',
      title: `p${i}`,
      datasource: 'tidb-cluster',
      targets: [{ expr: `rate(x_${i}{tidb_cluster="$tidb_cluster"}[1m]) ${' '.repeat(20_000)}` }],
    });
    const rows = Array.from({ length: 8 }, (_, r) => [
      { type: 'row', title: `row ${r}`, panels: [] },
      ...Array.from({ length: 12 }, (_, i) => panel(r * 100 + i)),
    ]).flat();
    const big = publish([{ name: 'tikv_details.json', text: dashboard('TiKV-Details', rows) }], publishInfo, 'ns', OWNER)
      .dashboards as Obj[];
    expect(big.length).toBeGreaterThan(1);
    assertValidK8sObjects(big, '1.32');
    const parts = big.map((cm) => JSON.parse(Object.values(cm.data)[0] as string));
    expect(parts.map((p) => p.title)).toEqual(parts.map((_, i) => `TiKV-Details (${i + 1} of ${parts.length}) · ns/demo`));
    expect(new Set(parts.map((p) => p.uid)).size).toBe(parts.length);
    for (const cm of big) expect(Buffer.byteLength(Object.values(cm.data)[0] as string)).toBeLessThanOrEqual(MAX_DASHBOARD_BYTES);
    // Every panel is kept, in order; each part after the first starts with a row.
    expect(parts.flatMap((p) => p.panels.map((x: Obj) => x.title))).toEqual([undefined, ...rows.map((r) => r.title)]);
    for (const p of parts.slice(1)) expect(p.panels[0].type).toBe('row');
  });

  test('a dashboard that fits is one part', () => {
    expect(splitDashboard({ title: 't', panels: [{ type: 'row' }] })).toHaveLength(1);
  });
});

describe('diff', () => {
  const risks = (before: Obj[], after: Obj[]) =>
    compareModels(buildModel(renderAll(before) as KubeObject[]), buildModel(renderAll(after) as KubeObject[])).clusters.flatMap((c) =>
      c.risks.filter((r) => r.id === 'monitoring').map((r) => r.message),
    );
  const on = (version = 'v8.5.7') => cluster({ version }, { annotations: MONITORED });

  test('reads a TidbMonitor beside its cluster, as render does', () => {
    const loaded = loadManifests([
      { file: 'in.yaml', text: [cluster(), operatorMonitor()].map((d) => toYaml(d)).join('---\n'), explicit: true },
    ]);
    expect(loaded.errors).toEqual([]);
    expect(loaded.objects).toEqual(renderAll([cluster(), operatorMonitor()]));
  });

  test('reports monitoring turned off, and a release whose rules and dashboards replace the others; not one turned on or unchanged', () => {
    expect(risks([cluster()], [on()])).toEqual([]);
    expect(risks([on()], [on()])).toEqual([]);
    const job = (version: string) => job0(renderAll([on(version)]));
    expect(risks([on()], [cluster()])).toEqual([
      `Monitoring is turned off: the PodMonitors go, so Prometheus stops scraping the cluster; pruning the Job ${job('v8.5.7')} removes the alert rules and dashboards it published (they name it as their owner).`,
    ]);
    expect(risks([on('v8.5.6')], [on('v8.5.7')])).toEqual([
      `The alert rules and dashboards of pingcap/tidb-monitor-initializer:v8.5.7 replace those of pingcap/tidb-monitor-initializer:v8.5.6: the new Job ${job('v8.5.7')} publishes them, and what only the old Job ${job('v8.5.6')} published goes when it is pruned.`,
    ]);
  });
});

function job0(objects: Obj[]): string {
  return objects.find((o) => o.kind === 'Job')!.metadata.name;
}
