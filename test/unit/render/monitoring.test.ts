/**
 * Monitoring without the Prometheus Operator's CRDs never blocks a cluster's sync. Told the target's
 * APIs (a RenderSettings document's apiVersions, TIDB_GITOPS_API_VERSIONS, --api-versions, or Argo
 * CD's KUBE_API_VERSIONS), the render leaves out what needs a CRD the target lacks, with one warning
 * naming the cluster, what was left out and the way out; not told, it renders the PodMonitors for a
 * later Argo CD sync wave, without a dry run while their CRD is missing.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { readSettings } from '../../../src/cli/argocd';
import { parseRenderArgs } from '../../../src/cli/main';
import { renderCommand } from '../../../src/cli/render';
import { publishMonitoring } from '../../../src/controller/publish-monitoring';
import { readClusterInputs } from '../../../src/load/clusters';
import { renderClusters } from '../../../src/render/render';
import { apiAvailability, parseApiVersions } from '../../../src/tidbcluster/api-versions';
import { CONTROLLER_ENV, MONITORING_ENV, MONITORING_JOB_ENV } from '../../../src/tidbcluster/contract';
import { settingsFromEnv, settingsFromInputs } from '../../../src/tidbcluster/settings';
import { assertValidK8sObjects } from '../../support/k8s-schema';
import { cluster, find, toYaml, type Obj } from '../../support/render';

const MONITORED = { 'tidb-gitops.io/monitoring': 'true' };
const CORE = 'v1,apps/v1,batch/v1,policy/v1,rbac.authorization.k8s.io/v1';
const WITH_CRDS = `${CORE},monitoring.coreos.com/v1`;
const SETTINGS = (apiVersions: unknown): Obj => ({ apiVersion: 'tidb-gitops.io/v1alpha1', kind: 'RenderSettings', apiVersions });

/** The operator's basic TidbMonitor: dashboards (grafana set), no alert rules. */
const MONITOR: Obj = {
  apiVersion: 'pingcap.com/v1alpha1',
  kind: 'TidbMonitor',
  metadata: { name: 'basic', namespace: 'ns' },
  spec: {
    clusters: [{ name: 'demo' }],
    prometheus: { baseImage: 'prom/prometheus', version: 'v2.27.1' },
    grafana: { baseImage: 'grafana/grafana', version: '7.5.11' },
    initializer: { baseImage: 'pingcap/tidb-monitor-initializer', version: 'v8.5.7' },
    reloader: { baseImage: 'pingcap/tidb-monitor-reloader', version: 'v1.0.1' },
  },
};

/** Reads the documents as `render` does, with the options given, and renders them. */
function render(docs: Obj[], options: { apiVersions?: string; env?: Record<string, string>; fallback?: Obj } = {}) {
  const inputs = [{ file: 'in.yaml', text: docs.map((d) => toYaml(d)).join('---\n'), explicit: true }];
  const read = readClusterInputs({ inputs }, options);
  if (read.errors.length > 0) throw new Error(read.errors.join('\n'));
  const objects = renderClusters(
    read.clusters.map((c) => c.resolved),
    read.clusters.map((c) => c.operations),
  ).flatMap((r) => r.objects as Obj[]);
  assertValidK8sObjects(objects, '1.31');
  return { objects, warnings: read.warnings, settings: read.settings };
}

const podMonitors = (objects: Obj[]) => objects.filter((o) => o.kind === 'PodMonitor');
const publishInfo = (objects: Obj[]) =>
  JSON.parse(
    find(objects, 'Job', /^demo-monitoring-/).spec.template.spec.containers[0].env.find((e: Obj) => e.name === 'TIDB_GITOPS_MONITORING')
      .value,
  );
const synced = (o: Obj) => o.metadata.annotations?.['argocd.argoproj.io/sync-wave'];

describe('the target known to lack monitoring.coreos.com/v1', () => {
  test('the PodMonitors and the PrometheusRule are left out with one warning; the cluster and the dashboards still render', () => {
    const { objects, warnings } = render([cluster({}, { annotations: MONITORED }), SETTINGS(CORE.split(','))]);
    expect(podMonitors(objects)).toEqual([]);
    expect(objects.some((o) => String(o.apiVersion).startsWith('monitoring.coreos.com/'))).toBe(false);
    // The cluster itself is all there.
    expect(
      objects
        .filter((o) => o.kind === 'StatefulSet')
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(['demo-pd', 'demo-tidb', 'demo-tikv']);
    // The Job publishes the dashboards (ConfigMaps) alone, and may not touch PrometheusRules.
    expect(publishInfo(objects)).toMatchObject({ rules: false, dashboards: true });
    expect(find(objects, 'Role', 'demo-monitoring').rules.some((r: Obj) => r.apiGroups.includes('monitoring.coreos.com'))).toBe(false);
    expect(warnings).toEqual([
      'in.yaml: document 1: warning: cluster ns/demo asks for monitoring (tidb-gitops.io/monitoring), but the target cluster does not serve monitoring.coreos.com/v1, ' +
        "the Prometheus Operator's API (so say the API versions given: the apiVersions setting, or Argo CD's KUBE_API_VERSIONS). " +
        'Left out, so that the cluster still syncs: its PodMonitors and the PrometheusRule of its alert rules; its Grafana dashboards are still published. ' +
        "To fix it, install the Prometheus Operator's CRDs and render again, or turn monitoring off: remove the tidb-gitops.io/monitoring annotation",
    ]);
  });

  test('a TidbMonitor with dashboards keeps its Job; one warning names it as what to remove', () => {
    const { objects, warnings } = render([cluster(), MONITOR], { apiVersions: CORE });
    expect(podMonitors(objects)).toEqual([]);
    expect(publishInfo(objects)).toMatchObject({ rules: false, dashboards: true });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('cluster ns/demo asks for monitoring (TidbMonitor "basic")');
    expect(warnings[0]).toContain(
      'Left out, so that the cluster still syncs: its PodMonitors; its Grafana dashboards are still published.',
    );
    expect(warnings[0]).toContain('turn monitoring off: remove TidbMonitor "basic" (or this cluster from its spec.clusters)');
  });

  test('a TidbMonitor with neither rules nor dashboards renders no monitoring object at all, and still warns', () => {
    const bare = { ...MONITOR, spec: { ...MONITOR.spec, grafana: undefined } };
    const { objects, warnings } = render([cluster(), bare], { apiVersions: CORE });
    expect(objects.filter((o) => ['PodMonitor', 'Job', 'Role'].includes(o.kind) && o.metadata.name.startsWith('demo-monitoring'))).toEqual(
      [],
    );
    expect(podMonitors(objects)).toEqual([]);
    expect(warnings).toHaveLength(1);
  });

  test("Argo CD's list names kinds: a group version without the PrometheusRule kind drops only the rules", () => {
    const argo = `${CORE},monitoring.coreos.com/v1,monitoring.coreos.com/v1/PodMonitor,monitoring.coreos.com/v1/ServiceMonitor`;
    const { objects, warnings } = render([cluster({}, { annotations: MONITORED })], { apiVersions: argo });
    expect(podMonitors(objects).length).toBeGreaterThan(0);
    expect(podMonitors(objects).every((m) => synced(m) === undefined)).toBe(true);
    expect(publishInfo(objects)).toMatchObject({ rules: false, dashboards: true });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('Left out, so that the cluster still syncs: the PrometheusRule of its alert rules;');
  });

  test('render prints the warning on stderr and exits 0 with the cluster on stdout', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tidb-gitops-crds-'));
    try {
      writeFileSync(join(dir, 'demo.yaml'), toYaml(cluster({}, { annotations: MONITORED })));
      let out = '';
      let err = '';
      const code = renderCommand(
        { paths: [join(dir, 'demo.yaml')] },
        { stdout: (s) => (out += s), stderr: (s) => (err += s), readStdin: () => '', env: { TIDB_GITOPS_API_VERSIONS: CORE } },
      );
      expect(code).toBe(0);
      const kinds = parseAllDocuments(out).map((d) => (d.toJS() as Obj).kind);
      expect(kinds).toContain('StatefulSet');
      expect(kinds).not.toContain('PodMonitor');
      expect(err.split('\n').filter((l) => l.includes('warning:'))).toEqual([
        expect.stringMatching(
          /demo\.yaml: document 1: warning: cluster ns\/demo asks for monitoring .* install the Prometheus Operator's CRDs/,
        ),
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the target known to serve monitoring.coreos.com/v1', () => {
  test('the PodMonitors and the rules render as asked, with no Argo CD annotation and no warning', () => {
    const { objects, warnings } = render([cluster({}, { annotations: MONITORED })], { apiVersions: WITH_CRDS });
    expect(
      podMonitors(objects)
        .map((m) => m.metadata.name)
        .sort(),
    ).toEqual(['demo-discovery', 'demo-pd', 'demo-tidb', 'demo-tikv']);
    expect(podMonitors(objects).every((m) => m.metadata.annotations === undefined)).toBe(true);
    expect(publishInfo(objects)).toMatchObject({ rules: true, dashboards: true });
    expect(warnings).toEqual([]);
  });
});

describe('the target not known', () => {
  test('the PodMonitors go in a later Argo CD sync wave, without a dry run while their CRD is missing; nothing else does', () => {
    const { objects, warnings } = render([cluster({}, { annotations: MONITORED })]);
    expect(podMonitors(objects)).toHaveLength(4);
    for (const m of podMonitors(objects)) {
      expect(m.metadata.annotations).toEqual({
        'argocd.argoproj.io/sync-wave': '1',
        'argocd.argoproj.io/sync-options': 'SkipDryRunOnMissingResource=true',
      });
    }
    // The cluster's objects stay in the default wave (0), so Argo CD applies them first.
    expect(objects.filter((o) => o.kind !== 'PodMonitor' && synced(o) !== undefined)).toEqual([]);
    expect(publishInfo(objects)).toMatchObject({ rules: true, dashboards: true });
    expect(warnings).toEqual([]);
  });
});

describe('where the API versions come from', () => {
  test('a list as kubectl api-versions prints it, or as Argo CD passes it with kinds; sorted and without repeats', () => {
    expect(parseApiVersions(' v1, apps/v1 ,,monitoring.coreos.com/v1/PodMonitor,v1/Pod,apps/v1')).toEqual({
      list: ['apps/v1', 'monitoring.coreos.com/v1/PodMonitor', 'v1', 'v1/Pod'],
    });
    expect(parseApiVersions(['v1', 'apps/v1'])).toEqual({ list: ['apps/v1', 'v1'] });
    expect(apiAvailability(undefined, 'monitoring.coreos.com/v1', 'PodMonitor')).toBe('unknown');
    expect(apiAvailability(['v1'], 'monitoring.coreos.com/v1', 'PodMonitor')).toBe('missing');
    expect(apiAvailability(['monitoring.coreos.com/v1', 'v1'], 'monitoring.coreos.com/v1', 'PodMonitor')).toBe('served');
    expect(apiAvailability(['monitoring.coreos.com/v1/PodMonitor', 'v1'], 'monitoring.coreos.com/v1', 'PodMonitor')).toBe('served');
    expect(
      apiAvailability(
        ['monitoring.coreos.com/v1', 'monitoring.coreos.com/v1/PodMonitor', 'v1'],
        'monitoring.coreos.com/v1',
        'PrometheusRule',
      ),
    ).toBe('missing');
  });

  test('fails on what is not such a list, saying why', () => {
    expect(parseApiVersions('v1,apps//v1')).toEqual({
      error:
        '"apps//v1" is not an API version: expected group/version (apps/v1, monitoring.coreos.com/v1) or v1, each optionally followed by /Kind',
    });
    expect(parseApiVersions('v1,Pod')).toMatchObject({ error: expect.stringMatching(/^"Pod" is not an API version/) });
    expect(parseApiVersions('apps/v1,monitoring.coreos.com/v1')).toMatchObject({
      error: expect.stringContaining('which always includes v1'),
    });
    expect(parseApiVersions(' , ')).toEqual({ error: 'expected the API versions the cluster serves, got none' });
    expect(parseApiVersions(3)).toEqual({ error: 'expected a list of API versions (or one comma-separated string), got 3' });
  });

  test('fails on a bad RenderSettings document with its file, document, path and line', () => {
    const text = toYaml(SETTINGS(['v1', 'apps/v1', 'monitoring.coreos.com v1']));
    expect(settingsFromInputs([{ file: 'settings.yaml', text }]).errors).toEqual([
      'settings.yaml: document 1: apiVersions[2] (line 6): "monitoring.coreos.com v1" is not an API version: expected group/version (apps/v1, monitoring.coreos.com/v1) or v1, each optionally followed by /Kind',
    ]);
    const partial = toYaml(SETTINGS(['monitoring.coreos.com/v1']));
    expect(settingsFromInputs([{ file: 'settings.yaml', text: partial }]).errors).toEqual([
      expect.stringMatching(/^settings\.yaml: document 1: apiVersions \(line 4\): expected every API version the cluster serves/),
    ]);
  });

  test('fails on a bad TIDB_GITOPS_API_VERSIONS and a bad --api-versions, naming them', () => {
    expect(settingsFromEnv({ TIDB_GITOPS_API_VERSIONS: 'apps/v1' }).errors).toEqual([
      expect.stringMatching(/^TIDB_GITOPS_API_VERSIONS: expected every API version/),
    ]);
    expect(parseRenderArgs(['x.yaml', '--api-versions', 'v1,a b'])).toMatch(/^--api-versions: "a b" is not an API version/);
    expect(parseRenderArgs(['x.yaml', '--api-versions=apps/v1,v1'])).toMatchObject({ apiVersions: 'apps/v1,v1' });
  });

  test("Argo CD's KUBE_API_VERSIONS is the last resort, under the environment and the inputs' RenderSettings", () => {
    const { settings } = readSettings({ KUBE_API_VERSIONS: WITH_CRDS, KUBE_VERSION: 'v1.33.1' });
    expect(settings.fallback).toEqual({ kubeVersion: 'v1.33.1', apiVersions: WITH_CRDS.split(',').sort().join(',') });
    expect(readSettings({ KUBE_API_VERSIONS: 'apps/v1' }).errors).toEqual([
      expect.stringMatching(/^KUBE_API_VERSIONS: expected every API version/),
    ]);
    // From Argo CD alone: the PodMonitors render as the destination serves them.
    expect(podMonitors(render([cluster({}, { annotations: MONITORED })], { fallback: settings.fallback }).objects)).toHaveLength(4);
    // A RenderSettings document wins over Argo CD; the environment over both.
    const fromFile = render([cluster({}, { annotations: MONITORED }), SETTINGS(CORE)], { fallback: settings.fallback });
    expect(podMonitors(fromFile.objects)).toEqual([]);
    const fromEnv = render([cluster({}, { annotations: MONITORED }), SETTINGS(CORE)], {
      env: { TIDB_GITOPS_API_VERSIONS: WITH_CRDS },
      fallback: settings.fallback,
    });
    expect(podMonitors(fromEnv.objects)).toHaveLength(4);
  });
});

describe('the publishing Job at run time, where nothing said whether the CRDs exist', () => {
  /** An API server that answers the Job's calls and records them; `prometheusRules` says whether it serves the kind. */
  async function withApiServer(prometheusRules: boolean, run: (kubeconfig: string, calls: string[]) => Promise<void>): Promise<void> {
    const calls: string[] = [];
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      req.resume();
      req.on('end', () => {
        calls.push(`${req.method} ${req.url!.split('?')[0]}`);
        const send = (code: number, body: unknown) => res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(body));
        if (req.url!.startsWith('/apis/batch/v1/namespaces/ns/jobs/'))
          return send(200, { metadata: { uid: '00000000-0000-0000-0000-000000000001' } });
        if (req.url === '/apis/monitoring.coreos.com/v1') {
          return prometheusRules
            ? send(200, {
                kind: 'APIResourceList',
                groupVersion: 'monitoring.coreos.com/v1',
                resources: [{ name: 'prometheusrules', kind: 'PrometheusRule' }],
              })
            : send(404, { kind: 'Status', code: 404, message: 'the server could not find the requested resource' });
        }
        if (req.method === 'PATCH') return send(200, {});
        return send(404, { kind: 'Status', code: 404 });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const dir = mkdtempSync(join(tmpdir(), 'tidb-gitops-publish-'));
    try {
      const kubeconfig = join(dir, 'kubeconfig');
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      writeFileSync(
        kubeconfig,
        toYaml({
          apiVersion: 'v1',
          kind: 'Config',
          'current-context': 't',
          contexts: [{ name: 't', context: { cluster: 't' } }],
          clusters: [{ name: 't', cluster: { server: url } }],
        }),
      );
      await run(kubeconfig, calls);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await new Promise((resolve) => server.close(resolve));
    }
  }

  async function publish(kubeconfig: string) {
    const assets = mkdtempSync(join(tmpdir(), 'tidb-gitops-assets-'));
    try {
      writeFileSync(
        join(assets, 'tidb.rules.yml'),
        'groups:\n  - name: alert.rules\n    rules:\n      - alert: TiDB_down\n        expr: up{job="tidb"} == 0\n',
      );
      writeFileSync(join(assets, 'overview.json'), JSON.stringify({ title: 'Test-Cluster-Overview', uid: 'overview', panels: [] }));
      const info = {
        cluster: 'demo',
        image: 'pingcap/tidb-monitor-initializer:v8.5.7',
        components: ['pd', 'tikv', 'tidb'],
        rules: true,
        dashboards: true,
        labels: {},
        assets,
      };
      const lines: string[] = [];
      const env = {
        [MONITORING_ENV]: JSON.stringify(info),
        [MONITORING_JOB_ENV]: 'demo-monitoring-abcdef0',
        [CONTROLLER_ENV.podNamespace]: 'ns',
      };
      const code = await publishMonitoring(['--kubeconfig', kubeconfig], { env, out: (l) => lines.push(l) });
      return { code, lines };
    } finally {
      rmSync(assets, { recursive: true, force: true });
    }
  }

  test('without the PrometheusRule kind: the dashboards are published, the rules skipped with the way out, and the Job succeeds', async () => {
    await withApiServer(false, async (kubeconfig, calls) => {
      const { code, lines } = await publish(kubeconfig);
      expect(code).toBe(0);
      expect(lines).toContain('applied ConfigMap demo-dashboard-overview');
      expect(lines).toContain(
        "skipped PrometheusRule demo-alert-rules: the cluster does not serve monitoring.coreos.com/v1 prometheusrules (the Prometheus Operator's CRDs are not installed); " +
          'install them, then delete Job demo-monitoring-abcdef0 so that it is applied and runs again, or turn the alert rules off',
      );
      expect(calls.filter((c) => c.includes('prometheusrules'))).toEqual([]);
    });
  });

  test('with it: the rules are applied as before', async () => {
    await withApiServer(true, async (kubeconfig, calls) => {
      const { code, lines } = await publish(kubeconfig);
      expect([code, lines.filter((l) => l.startsWith('skipped PrometheusRule'))]).toEqual([0, []]);
      expect(calls).toContain('PATCH /apis/monitoring.coreos.com/v1/namespaces/ns/prometheusrules/demo-alert-rules');
    });
  });
});
