/**
 * Monitoring on the real API server (v1.32, test/kube/), with Prometheus Operator's CRDs installed:
 * the rendered PodMonitors are accepted (strict field validation); the rendered Job's Pod, created by
 * the real Job controller, runs `tidb-gitops publish-monitoring` as the rendered ServiceAccount (the
 * real RBAC authorizer enforces the rendered Role) on files in the initializer image's format, and
 * publishes the PrometheusRule and dashboard ConfigMaps owned by the Job; running it again changes
 * nothing; a new release's Job takes over what both publish, and the real garbage collector removes
 * what only the pruned Job published, and everything once monitoring is turned off. And a real scraper
 * with Kubernetes service discovery against the same API server (VictoriaMetrics' vmagent, Debian's;
 * Debian's Prometheus is built without Kubernetes discovery), given exactly the scrape configs
 * Prometheus Operator makes of the rendered PodMonitors (support/podmonitor-scrape.ts), finds the
 * cluster's Pods and scrapes the simulators' /metrics at their Pod addresses, with the labels
 * PingCAP's rules and dashboards select by; the real Prometheus scrapes the same targets too.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { realApiSuite } from '../kube/suite';
import { RealWorld } from '../kube/world';
import { simCluster } from '../sim/controller-process';
import { renderWith } from '../support/companions';
import { monitoringCrds } from '../support/k8s-schema';
import { scrapeConfigs } from '../support/podmonitor-scrape';
import { scraperAccount } from '../support/scraper-account';
import { startVmagent, type Vmagent } from '../support/vmagent';
import { startPrometheus, type Prom } from '../support/prometheus';
import { resourcePath, type KubeClient } from '../kube/client';
import { TEST_DIR } from '../support/paths';

type Obj = Record<string, any>;
const run = promisify(execFile);
const suite = realApiSuite();
const { describeReal } = suite;

jest.setTimeout(180_000);

const CLI = join(TEST_DIR, '..', 'bin', 'tidb-gitops.js');
const RULES = `groups:
  - name: alert.rules
    rules:
      - alert: PD_down
        expr: up{job="pd"} == 0
        for: 1m
        labels: { env: ENV_LABELS_ENV, level: critical }
`;
const dashboard = (title: string) =>
  JSON.stringify({
    uid: title,
    title: `Test-Cluster-${title}`,
    panels: [{ type: 'timeseries', datasource: 'tidb-cluster' }],
    templating: { list: [] },
  });

let world: RealWorld | undefined;
let vm: Vmagent | undefined;
let prom: Prom | undefined;
const dirs: string[] = [];
afterEach(async () => {
  const w = world;
  world = undefined;
  await vm?.stop();
  await prom?.stop();
  vm = undefined;
  prom = undefined;
  await w?.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Prometheus Operator's PodMonitor and PrometheusRule CRDs, as its release ships them, once per API server. */
async function installCrds(admin: KubeClient): Promise<void> {
  const crds = monitoringCrds() as Obj[];
  for (const crd of crds) {
    const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`;
    if (!(await admin.get(path))) await admin.create(crd);
  }
  const deadline = Date.now() + 30_000;
  for (const crd of crds) {
    for (;;) {
      const got = await admin.get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`);
      if (got?.status?.conditions?.some((c: Obj) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new Error(`CRD ${crd.metadata.name} not established`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * The Job's Pod as kubelet would run it: the init container's copy of the image's files (here, the
 * test's files), then the publishing container with its environment, as the Pod's ServiceAccount.
 */
function publisher(w: RealWorld, files: () => Record<string, string>) {
  return async (pod: Obj) => {
    const assets = mkdtempSync(join(tmpdir(), 'assets-'));
    dirs.push(assets);
    for (const [name, text] of Object.entries(files())) writeFileSync(join(assets, name), text);
    const container = pod.spec.containers[0];
    const env: Record<string, string> = { PATH: process.env.PATH ?? '' };
    for (const e of container.env) {
      if (e.value !== undefined)
        env[e.name] = e.name === 'TIDB_GITOPS_MONITORING' ? JSON.stringify({ ...JSON.parse(e.value), assets }) : e.value;
      else if (e.valueFrom?.fieldRef?.fieldPath === 'metadata.namespace') env[e.name] = pod.metadata.namespace;
      else if (e.valueFrom?.fieldRef?.fieldPath === "metadata.labels['batch.kubernetes.io/job-name']")
        env[e.name] = pod.metadata.labels['batch.kubernetes.io/job-name'];
      else throw new Error(`unexpected env ${JSON.stringify(e)}`);
    }
    const sa = pod.spec.serviceAccountName;
    const res = await w.kube.ok('POST', `/api/v1/namespaces/${pod.metadata.namespace}/serviceaccounts/${sa}/token`, {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600 } },
    });
    const kubeconfig = w.cp.writeKubeconfig(`${pod.metadata.namespace}-${sa}`, { token: res.status.token });
    expect(container.command).toEqual(['tidb-gitops', 'publish-monitoring']);
    try {
      const { stdout } = await run(process.execPath, [CLI, 'publish-monitoring', '--kubeconfig', kubeconfig], { env });
      return { exitCode: 0, message: stdout.trim().split('\n').pop() ?? '' };
    } catch (err) {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      return { exitCode: typeof e.code === 'number' ? e.code : 1, message: `${e.stdout ?? ''}${e.stderr ?? ''}`.trim() };
    }
  };
}

const published = async (w: RealWorld) => {
  const cms = (await w.kube.list(`/api/v1/namespaces/${w.namespace}/configmaps`, 'labelSelector=grafana_dashboard%3D1')).filter(
    (c) => !c.metadata.deletionTimestamp,
  );
  const rules = await w.kube.get(`/apis/monitoring.coreos.com/v1/namespaces/${w.namespace}/prometheusrules/c-alert-rules`);
  return { cms, rules };
};
const jobs = async (w: RealWorld) =>
  (await w.kube.list(`/apis/batch/v1/namespaces/${w.namespace}/jobs`)).filter((j) => j.metadata.name.startsWith('c-monitoring-'));
const succeeded = (j: Obj) => j.status?.conditions?.some((c: Obj) => c.type === 'Complete' && c.status === 'True');

describeReal('monitoring on the real API server', () => {
  test('the Job publishes once per release, owned by it; the garbage collector removes what a pruned Job alone published', async () => {
    const namespace = 'mon-publish';
    await installCrds(suite.cp().admin());
    const spec = (version: string) =>
      simCluster({ version, tidb: { replicas: 1 } }, { namespace, annotations: { 'tidb-gitops.io/monitoring': 'true' } });
    const w = await RealWorld.start({ cp: suite.cp(), cluster: spec('v8.5.6'), render: renderWith(), applyAtStart: false });
    world = w;
    let files: Record<string, string> = {
      'pd.rules.yml': RULES,
      'pd.json': dashboard('PD'),
      'tidb_runtime.json': dashboard('TiDB-Runtime'),
      'tikv_summary.json': dashboard('TiKV-Summary'),
    };
    w.kubelet.runJob = publisher(w, () => files);
    // Strict field validation of what is new here: an unknown or misplaced field is an error, not a warning.
    for (const o of w.objects.filter((x) => ['PodMonitor', 'Job'].includes(x.kind))) {
      await w.kube.ok('POST', `${resourcePath(o.apiVersion, o.kind, namespace)}?dryRun=All&fieldValidation=Strict`, { body: o });
    }
    await w.apply(w.objects);
    // Every rendered monitoring object was accepted, strictly.
    const monitors = await w.kube.list(`/apis/monitoring.coreos.com/v1/namespaces/${namespace}/podmonitors`);
    expect(monitors.map((m) => m.metadata.name).sort()).toEqual(['c-discovery', 'c-pd', 'c-tidb', 'c-tikv']);

    await w.waitFor(async () => (await jobs(w)).some(succeeded), 60_000, 'the monitoring Job to complete');
    const [first] = await jobs(w);
    const a = await published(w);
    expect(a.cms.map((c) => c.metadata.name).sort()).toEqual(['c-dashboard-pd', 'c-dashboard-tidb-runtime', 'c-dashboard-tikv-summary']);
    for (const o of [...a.cms, a.rules!])
      expect(o.metadata.ownerReferences).toEqual([
        expect.objectContaining({ kind: 'Job', name: first.metadata.name, uid: first.metadata.uid }),
      ]);
    expect(a.rules!.spec.groups[0]).toMatchObject({
      name: 'pd',
      rules: [{ alert: 'PD_down', expr: `up{job="pd",tidb_cluster="${namespace}-c"} == 0` }],
    });

    // The same Pod run again (kubelet restarting it) changes nothing.
    const again = await publisher(
      w,
      () => files,
    )(
      (
        await w.kube.list(`/api/v1/namespaces/${namespace}/pods`, `labelSelector=batch.kubernetes.io%2Fjob-name%3D${first.metadata.name}`)
      )[0],
    );
    expect(again.exitCode).toBe(0);
    const b = await published(w);
    expect(b.cms.map((c) => c.metadata.resourceVersion).sort()).toEqual(a.cms.map((c) => c.metadata.resourceVersion).sort());
    expect(b.rules!.metadata.resourceVersion).toBe(a.rules!.metadata.resourceVersion);

    // A new release: its image has no TiDB-Runtime dashboard. Its Job publishes; the old one is pruned.
    files = { 'pd.rules.yml': RULES, 'pd.json': dashboard('PD'), 'tikv_summary.json': dashboard('TiKV-Summary') };
    const next = renderWith()(spec('v8.5.7'));
    await w.apply(next);
    await w.waitFor(async () => (await jobs(w)).filter(succeeded).length === 2, 60_000, "the new release's Job to complete");
    const second = (await jobs(w)).find((j) => j.metadata.name !== first.metadata.name)!;
    // What both publish is now the new Job's alone (the field manager's apply replaced the owner);
    // the dashboard the new release lacks is still the old Job's.
    const c = await published(w);
    for (const o of [...c.cms, c.rules!]) {
      const owner = o.metadata.name === 'c-dashboard-tidb-runtime' ? first : second;
      expect([o.metadata.name, o.metadata.ownerReferences.map((r: Obj) => r.uid)]).toEqual([o.metadata.name, [owner.metadata.uid]]);
    }
    await w.kube.ok('DELETE', `/apis/batch/v1/namespaces/${namespace}/jobs/${first.metadata.name}`, {
      body: { propagationPolicy: 'Background' },
    });
    await w.waitFor(async () => (await published(w)).cms.length === 2, 60_000, 'the garbage collector');
    expect((await published(w)).cms.map((c) => c.metadata.name).sort()).toEqual(['c-dashboard-pd', 'c-dashboard-tikv-summary']);

    // Monitoring off: the Job is pruned and everything it published goes.
    await w.kube.ok('DELETE', `/apis/batch/v1/namespaces/${namespace}/jobs/${second.metadata.name}`, {
      body: { propagationPolicy: 'Background' },
    });
    await w.waitFor(
      async () => {
        const p = await published(w);
        return p.cms.length === 0 && p.rules === undefined;
      },
      60_000,
      'the garbage collector to remove the rules and dashboards',
    );
    // The publishing ServiceAccount was never refused.
    expect(w.cp.audit().filter((r) => r.user === `system:serviceaccount:${namespace}:c-monitoring` && r.code === 403)).toEqual([]);
  });

  test("a real scraper discovers the cluster's Pods through the rendered PodMonitors and scrapes them with the operator's labels", async () => {
    const namespace = 'mon-scrape';
    const admin = suite.cp().admin();
    await installCrds(admin);
    const w = await RealWorld.start({
      cp: suite.cp(),
      cluster: simCluster({ tidb: { replicas: 1 } }, { namespace, annotations: { 'tidb-gitops.io/monitoring': 'true' } }),
      render: renderWith(),
    });
    world = w;
    // The controller sets the StatefulSets' replicas and serves PD its discovery.
    await w.startController();
    await w.waitFor(
      async () => (await w.settled('pd', 3)) && (await w.settled('tikv', 3)) && (await w.settled('tidb', 1)),
      120_000,
      'the cluster to run',
    );
    // What Prometheus Operator would select: the PodMonitors as the API server keeps them.
    const monitors = await w.kube.list(`/apis/monitoring.coreos.com/v1/namespaces/${namespace}/podmonitors`);
    expect(monitors.map((m) => m.metadata.name).sort()).toEqual(['c-discovery', 'c-pd', 'c-tidb', 'c-tikv']);

    // The scraper's credentials: a ServiceAccount that may list and watch Pods in the namespace, no more.
    const dir = mkdtempSync(join(tmpdir(), 'mon-scrape-'));
    dirs.push(dir);
    const sa = 'prometheus';
    const tokenFile = await scraperAccount(admin, namespace, sa, dir);
    const scrape = scrapeConfigs(monitors, {
      apiServer: w.cp.server,
      caFile: w.cp.pki.caCert,
      bearerTokenFile: tokenFile,
      secretFile: () => {
        throw new Error('no TLS in this cluster');
      },
    });
    const config = { global: { scrape_interval: '1s' }, scrape_configs: scrape };

    const expected = (pod: Obj) => {
      const component = pod.metadata.labels['app.kubernetes.io/component'];
      const port = { pd: 2379, tikv: 20180, tidb: 10080, discovery: 10263 }[component as string];
      return { pod: pod.metadata.name, component, address: `${pod.status.podIP}:${port}` };
    };
    const pods = (await w.kube.list(`/api/v1/namespaces/${namespace}/pods`)).filter(
      (p) =>
        p.metadata.labels?.['app.kubernetes.io/instance'] === 'c' &&
        p.metadata.labels?.['app.kubernetes.io/managed-by'] === 'tidb-operator',
    );
    const want = pods.map(expected).sort((a, b) => (a.pod < b.pod ? -1 : 1));
    expect(want.map((t) => t.pod)).toEqual(
      ['c-pd-0', 'c-pd-1', 'c-pd-2', 'c-tidb-0', 'c-tikv-0', 'c-tikv-1', 'c-tikv-2', expect.stringMatching(/^c-discovery-/)].sort(),
    );

    const check = (targets: Obj[]) => {
      const got = targets
        .map((t) => ({
          pod: t.labels.instance,
          component: t.labels.component,
          address: t.labels.__address__ ?? new URL(t.scrapeUrl).host,
          labels: t.labels,
          health: t.health,
        }))
        .sort((a, b) => (a.pod < b.pod ? -1 : 1));
      expect(got.map(({ pod, component, address }) => ({ pod, component, address }))).toEqual(want);
      for (const t of got) {
        expect(t.labels).toMatchObject({ job: t.component, cluster: 'c', tidb_cluster: `${namespace}-c`, kubernetes_namespace: namespace });
      }
      return got;
    };
    // The servers are scraped; the controller runs outside its Pod here (its metrics are not at the Pod's address).
    const serving = (targets: Obj[]) =>
      targets.length === want.length && targets.filter((t) => t.labels.component !== 'discovery').every((t) => t.health === 'up');

    vm = await startVmagent({ config, dir });
    const v = vm;
    check(
      await v.waitFor(
        async () => {
          const ts = await v.targets();
          return serving(ts) ? ts : undefined;
        },
        60_000,
        'vmagent to scrape every server Pod',
      ),
    );
    // What was scraped carries the labels PingCAP's rules and dashboards select by.
    await v.waitFor(
      async () => {
        const series = v.written();
        const up = (component: string) =>
          series.filter(
            (s: Obj) =>
              s.labels.__name__ === 'up' && s.labels.job === component && s.labels.tidb_cluster === `${namespace}-c` && s.value === 1,
          ).length;
        return up('pd') === 3 && up('tikv') === 3 && up('tidb') === 1 ? true : undefined;
      },
      60_000,
      "the servers' up series",
    );

    prom = await startPrometheus({ config: { ...config, global: { scrape_interval: '1s', evaluation_interval: '1s' } }, dir });
    const p = prom;
    check(
      await p.waitFor(
        async () => {
          const ts = await p.targets();
          return serving(ts) ? ts : undefined;
        },
        60_000,
        'Prometheus to scrape every server Pod',
      ),
    );
    const pdUp = await p.waitFor(
      async () => {
        const r = await p.query(`up{job="pd", tidb_cluster="${namespace}-c"} == 1`);
        return r.length === 3 ? r : undefined;
      },
      60_000,
      'PD up in Prometheus',
    );
    expect(pdUp.map((r: Obj) => r.metric.instance).sort()).toEqual(['c-pd-0', 'c-pd-1', 'c-pd-2']);

    // The scrapers read Pods only: every request of theirs was allowed.
    expect(w.cp.audit().filter((r) => r.user === `system:serviceaccount:${namespace}:${sa}` && r.code !== 200)).toEqual([]);
  });
});
