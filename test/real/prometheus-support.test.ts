/**
 * The Prometheus test support: scrapeConfigs (PodMonitors → scrape_configs as prometheus-operator
 * writes them) against the operator's own golden files, and a real Prometheus (Debian's 2.42
 * package) that discovers Pods through a real kube-apiserver and scrapes exactly the ones a
 * PodMonitor selects. No TiDB code is involved.
 *
 * Debian's Prometheus is built without Kubernetes SD: there, startPrometheus serves the
 * `kubernetes_sd_configs` through its pod discovery bridge (test/support/prometheus.ts), which lists
 * the Pods with the SD config's own credentials; relabeling and scraping remain Prometheus's.
 * Debian's vmagent (victoria-metrics 1.79, test/support/vmagent.ts) keeps Kubernetes SD: the same
 * scrape configs, given to it, are discovered by its own watcher against the API server, so the
 * whole path from PodMonitor to scraped sample runs without the bridge.
 */
import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { parse } from 'yaml';
import type { Obj } from '../kube/client';
import { realApiSuite } from '../kube/suite';
import { scraperAccount } from '../support/scraper-account';
import { scrapeConfigs, type ScrapeConfigOptions } from '../support/podmonitor-scrape';
import { checkConfig, checkRules, startPrometheus, type Prom } from '../support/prometheus';
import { PROMETHEUS, requires, VMAGENT } from '../support/requires';
import { checkVmagentConfig, startVmagent, type Vmagent } from '../support/vmagent';

const API = 'https://127.0.0.1:6443';
const noFiles: ScrapeConfigOptions = {
  apiServer: API,
  secretFile: (ns, name, key) => {
    throw new Error(`unexpected secret ${ns}/${name}/${key}`);
  },
};

const podMonitor = (spec: Obj, name = 'defaultPodMonitor', namespace = 'default'): Obj => ({
  apiVersion: 'monitoring.coreos.com/v1',
  kind: 'PodMonitor',
  metadata: { name, namespace, labels: { group: 'group1' } },
  spec,
});

/** The operator's promcfg_test.go defaultPodMonitor(). */
const defaultSpec = (endpoint: Obj = {}): Obj => ({
  selector: { matchLabels: { group: 'group1' } },
  podMetricsEndpoints: [{ port: 'web', interval: '30s', ...endpoint }],
});

/**
 * An operator golden file's one scrape config. The operator writes `$(SHARD)`, which its config
 * reloader replaces with the shard number (0 for a single shard) before Prometheus reads the file.
 */
const golden = (yaml: string): Obj => parse(yaml.replace('$(SHARD)', '0'))[0];

/** The tail every PodMonitor scrape config ends with: the hashmod sharding over one shard. */
const SHARDING = `
  - source_labels:
    - __address__
    - __tmp_hash
    target_label: __tmp_hash
    regex: (.+);
    replacement: $1
    action: replace
  - source_labels:
    - __tmp_hash
    target_label: __tmp_hash
    modulus: 1
    action: hashmod
  - source_labels:
    - __tmp_hash
    - __tmp_disable_sharding
    regex: $(SHARD);|.+;.+
    action: keep`;

/** The operator's goldens have no apiserverConfig; ours always names the API server. */
const withoutApiServer = (cfg: Obj): Obj => {
  expect(cfg.kubernetes_sd_configs.map((sd: Obj) => sd.api_server)).toEqual([API]);
  return { ...cfg, kubernetes_sd_configs: cfg.kubernetes_sd_configs.map(({ api_server: _, ...sd }: Obj) => sd) };
};

const relabelingsOf = (cfg: Obj, action: string) => cfg.relabel_configs.filter((r: Obj) => r.action === action);

describe('scrapeConfigs', () => {
  test('GIVEN the operator test PodMonitor with a targetPort number THEN the scrape config is its golden podMonitorObjectWithTargetPortInt.golden', () => {
    const [cfg] = scrapeConfigs([podMonitor({ ...defaultSpec(), podMetricsEndpoints: [{ interval: '30s', targetPort: 10240 }] })], noFiles);
    expect(withoutApiServer(cfg)).toEqual(
      golden(`
- job_name: podMonitor/default/defaultPodMonitor/0
  honor_labels: false
  kubernetes_sd_configs:
  - role: pod
    namespaces:
      names:
      - default
  scrape_interval: 30s
  relabel_configs:
  - source_labels:
    - job
    target_label: __tmp_prometheus_job_name
  - action: drop
    source_labels:
    - __meta_kubernetes_pod_phase
    regex: (Failed|Succeeded)
  - action: keep
    source_labels:
    - __meta_kubernetes_pod_label_group
    - __meta_kubernetes_pod_labelpresent_group
    regex: (group1);true
  - action: keep
    source_labels:
    - __meta_kubernetes_pod_container_port_number
    regex: 10240
  - source_labels:
    - __meta_kubernetes_namespace
    target_label: namespace
  - source_labels:
    - __meta_kubernetes_pod_container_name
    target_label: container
  - source_labels:
    - __meta_kubernetes_pod_name
    target_label: pod
  - target_label: job
    replacement: default/defaultPodMonitor
  - target_label: endpoint
    replacement: "10240"${SHARDING}`),
    );
  });

  test('GIVEN podTargetLabels THEN the scrape config is the golden PodTargetLabelsFromPodMonitor.golden', () => {
    const [cfg] = scrapeConfigs(
      [
        podMonitor(
          { podTargetLabels: ['example', 'env'], selector: {}, podMetricsEndpoints: [{ port: 'web', interval: '30s' }] },
          'testpodmonitor1',
        ),
      ],
      noFiles,
    );
    expect(withoutApiServer(cfg)).toEqual(
      golden(`
- job_name: podMonitor/default/testpodmonitor1/0
  honor_labels: false
  kubernetes_sd_configs:
  - role: pod
    namespaces:
      names:
      - default
  scrape_interval: 30s
  relabel_configs:
  - source_labels:
    - job
    target_label: __tmp_prometheus_job_name
  - action: drop
    source_labels:
    - __meta_kubernetes_pod_phase
    regex: (Failed|Succeeded)
  - action: keep
    source_labels:
    - __meta_kubernetes_pod_container_port_name
    regex: web
  - source_labels:
    - __meta_kubernetes_namespace
    target_label: namespace
  - source_labels:
    - __meta_kubernetes_pod_container_name
    target_label: container
  - source_labels:
    - __meta_kubernetes_pod_name
    target_label: pod
  - source_labels:
    - __meta_kubernetes_pod_label_example
    target_label: example
    regex: (.+)
    replacement: \${1}
  - source_labels:
    - __meta_kubernetes_pod_label_env
    target_label: env
    regex: (.+)
    replacement: \${1}
  - target_label: job
    replacement: default/testpodmonitor1
  - target_label: endpoint
    replacement: web${SHARDING}`),
    );
  });

  test('GIVEN matchLabels and every matchExpressions operator THEN keep/drop relabelings on the sanitized pod label and labelpresent meta labels', () => {
    const [cfg] = scrapeConfigs(
      [
        podMonitor({
          selector: {
            matchLabels: { 'app.kubernetes.io/name': 'tidb-cluster', 'app.kubernetes.io/component': 'pd' },
            matchExpressions: [
              { key: 'tier', operator: 'In', values: ['a', 'b'] },
              { key: 'tier', operator: 'NotIn', values: ['c'] },
              { key: 'app.kubernetes.io/instance', operator: 'Exists' },
              { key: 'canary', operator: 'DoesNotExist' },
            ],
          },
          podMetricsEndpoints: [{ port: 'status' }],
        }),
      ],
      noFiles,
    );
    const pair = (k: string) => [`__meta_kubernetes_pod_label_${k}`, `__meta_kubernetes_pod_labelpresent_${k}`];
    expect(relabelingsOf(cfg, 'keep')).toEqual([
      // matchLabels in sorted key order, then the expressions in order
      { action: 'keep', source_labels: pair('app_kubernetes_io_component'), regex: '(pd);true' },
      { action: 'keep', source_labels: pair('app_kubernetes_io_name'), regex: '(tidb-cluster);true' },
      { action: 'keep', source_labels: pair('tier'), regex: '(a|b);true' },
      { action: 'keep', source_labels: ['__meta_kubernetes_pod_labelpresent_app_kubernetes_io_instance'], regex: 'true' },
      { action: 'keep', source_labels: ['__meta_kubernetes_pod_container_port_name'], regex: 'status' },
      // the sharding's last rule, one shard
      { action: 'keep', source_labels: ['__tmp_hash', '__tmp_disable_sharding'], regex: '0;|.+;.+' },
    ]);
    expect(relabelingsOf(cfg, 'drop')).toEqual([
      { action: 'drop', source_labels: ['__meta_kubernetes_pod_phase'], regex: '(Failed|Succeeded)' },
      { action: 'drop', source_labels: pair('tier'), regex: '(c);true' },
      { action: 'drop', source_labels: ['__meta_kubernetes_pod_labelpresent_canary'], regex: 'true' },
    ]);
  });

  test('GIVEN portNumber THEN it keeps the container port number and sets no endpoint label (podMonitorObjectWithPortNumber.golden)', () => {
    const [cfg] = scrapeConfigs(
      [podMonitor({ ...defaultSpec(), podMetricsEndpoints: [{ interval: '30s', portNumber: 1024, targetPort: '10240' }] })],
      noFiles,
    );
    expect(relabelingsOf(cfg, 'keep')[1]).toEqual({
      action: 'keep',
      source_labels: ['__meta_kubernetes_pod_container_port_number'],
      regex: 1024,
    });
    // portNumber wins the filter; the deprecated targetPort still names the endpoint, as in the golden.
    expect(cfg.relabel_configs.filter((r: Obj) => r.target_label === 'endpoint')).toEqual([
      { target_label: 'endpoint', replacement: '10240' },
    ]);
  });

  test('GIVEN namespaceSelector, jobLabel, endpoint settings and relabelings THEN each lands where the operator puts it', () => {
    const cfgs = scrapeConfigs(
      [
        podMonitor(
          {
            jobLabel: 'app.kubernetes.io/component',
            namespaceSelector: { matchNames: ['a', 'b'] },
            selector: {},
            podMetricsEndpoints: [
              {
                port: 'status',
                path: '/metrics',
                scheme: 'HTTPS',
                params: { z: ['1'], a: ['2', '3'] },
                interval: '15s',
                scrapeTimeout: '5s',
                honorLabels: true,
                honorTimestamps: false,
                filterRunning: false,
                relabelings: [{ sourceLabels: ['__meta_kubernetes_pod_node_name'], targetLabel: 'node', action: 'Replace' }],
                metricRelabelings: [{ sourceLabels: ['__name__'], regex: 'go_.*', action: 'drop' }],
              },
              { port: 'other' },
            ],
          },
          'pm',
          'mon',
        ),
        podMonitor({ selector: {}, namespaceSelector: { any: true }, podMetricsEndpoints: [{}] }, 'all', 'aaa'),
      ],
      { apiServer: API, caFile: '/ca.crt', bearerTokenFile: '/token', insecureSkipVerify: false, secretFile: noFiles.secretFile },
    );
    // Sorted by "<namespace>/<name>", one config per endpoint.
    expect(cfgs.map((c) => c.job_name)).toEqual(['podMonitor/aaa/all/0', 'podMonitor/mon/pm/0', 'podMonitor/mon/pm/1']);
    const [all, pm] = cfgs;
    expect(all.kubernetes_sd_configs).toEqual([
      { role: 'pod', api_server: API, bearer_token_file: '/token', tls_config: { insecure_skip_verify: false, ca_file: '/ca.crt' } },
    ]);
    expect(pm.kubernetes_sd_configs[0].namespaces).toEqual({ names: ['a', 'b'] });
    expect(Object.keys(pm)).toEqual([
      'job_name',
      'honor_labels',
      'honor_timestamps',
      'kubernetes_sd_configs',
      'scrape_interval',
      'scrape_timeout',
      'metrics_path',
      'params',
      'scheme',
      'relabel_configs',
      'metric_relabel_configs',
    ]);
    expect(pm).toMatchObject({
      honor_labels: true,
      honor_timestamps: false,
      scrape_interval: '15s',
      scrape_timeout: '5s',
      metrics_path: '/metrics',
      scheme: 'https',
    });
    expect(Object.keys(pm.params)).toEqual(['a', 'z']);
    expect(relabelingsOf(pm, 'drop')).toEqual([]);
    const jobs = pm.relabel_configs.filter((r: Obj) => r.target_label === 'job');
    expect(jobs).toEqual([
      { target_label: 'job', replacement: 'mon/pm' },
      {
        source_labels: ['__meta_kubernetes_pod_label_app_kubernetes_io_component'],
        target_label: 'job',
        regex: '(.+)',
        replacement: '${1}',
      },
    ]);
    // The endpoint's relabelings come after the operator's own labels, before the sharding.
    const i = pm.relabel_configs.findIndex((r: Obj) => r.target_label === 'node');
    expect(pm.relabel_configs[i - 1]).toEqual({ target_label: 'endpoint', replacement: 'status' });
    expect(pm.relabel_configs[i]).toEqual({ source_labels: ['__meta_kubernetes_pod_node_name'], target_label: 'node', action: 'replace' });
    expect(pm.metric_relabel_configs).toEqual([{ source_labels: ['__name__'], regex: 'go_.*', action: 'drop' }]);
  });

  test('GIVEN a tlsConfig from Secrets and a ConfigMap THEN the callbacks name the files and tls_config lists them in the operator order', () => {
    const asked: string[] = [];
    const [cfg] = scrapeConfigs(
      [
        podMonitor({
          ...defaultSpec({
            tlsConfig: {
              serverName: 'basic-pd',
              insecureSkipVerify: false,
              ca: { configMap: { name: 'ca', key: 'ca.crt' } },
              cert: { secret: { name: 'client', key: 'tls.crt' } },
              keySecret: { name: 'client', key: 'tls.key' },
            },
          }),
        }),
      ],
      {
        apiServer: API,
        secretFile: (ns, name, key) => (asked.push(`secret ${ns}/${name}/${key}`), `/certs/secret_${ns}_${name}_${key}`),
        configMapFile: (ns, name, key) => (asked.push(`configmap ${ns}/${name}/${key}`), `/certs/configmap_${ns}_${name}_${key}`),
      },
    );
    expect(asked).toEqual(['configmap default/ca/ca.crt', 'secret default/client/tls.crt', 'secret default/client/tls.key']);
    expect(Object.entries(cfg.tls_config)).toEqual([
      ['insecure_skip_verify', false],
      ['ca_file', '/certs/configmap_default_ca_ca.crt'],
      ['cert_file', '/certs/secret_default_client_tls.crt'],
      ['key_file', '/certs/secret_default_client_tls.key'],
      ['server_name', 'basic-pd'],
    ]);
    // A zero tlsConfig is none (mergeSafeTLSConfigWithScrapeClass).
    expect(scrapeConfigs([podMonitor(defaultSpec({ tlsConfig: {} }))], noFiles)[0].tls_config).toBeUndefined();
  });

  test.each([
    [
      'a spec field it does not reproduce',
      { ...defaultSpec(), sampleLimit: 10 },
      'PodMonitor default/defaultPodMonitor: spec.sampleLimit: not supported by scrapeConfigs',
    ],
    [
      'an endpoint field it does not reproduce',
      defaultSpec({ bearerTokenSecret: { name: 's', key: 'k' } }),
      'spec.podMetricsEndpoints[0].bearerTokenSecret: not supported',
    ],
    [
      'a TLS field it does not reproduce',
      defaultSpec({ tlsConfig: { minVersion: 'TLS12' } }),
      'spec.podMetricsEndpoints[0].tlsConfig.minVersion: not supported',
    ],
    [
      'a relabeling field it does not know',
      defaultSpec({ relabelings: [{ action: 'keep', regx: 'a' }] }),
      'spec.podMetricsEndpoints[0].relabelings[0].regx: not supported',
    ],
    [
      'the RoleSelector selector mechanism',
      { ...defaultSpec(), selectorMechanism: 'RoleSelector' },
      'spec.selectorMechanism: "RoleSelector" is not supported',
    ],
    ['a missing selector', { podMetricsEndpoints: [] }, 'spec.selector: required field is missing'],
    [
      'an In expression without values',
      { ...defaultSpec(), selector: { matchExpressions: [{ key: 'a', operator: 'In', values: [] }] } },
      'spec.selector.matchExpressions[0].values: must be non-empty for operator In',
    ],
    [
      'a client cert without its key',
      defaultSpec({ tlsConfig: { cert: { secret: { name: 'c', key: 'k' } } } }),
      'spec.podMetricsEndpoints[0].tlsConfig: client cert specified without client key',
    ],
    [
      'a ConfigMap without a configMapFile callback',
      defaultSpec({ tlsConfig: { ca: { configMap: { name: 'c', key: 'k' } } } }),
      'tlsConfig.ca.configMap: scrapeConfigs was given no configMapFile callback',
    ],
    [
      'a scrapeTimeout above the interval',
      defaultSpec({ scrapeTimeout: '1m' }),
      'spec.podMetricsEndpoints[0].scrapeTimeout: 1m is greater than interval 30s',
    ],
    [
      'a replace relabeling without targetLabel',
      defaultSpec({ relabelings: [{ sourceLabels: ['a'] }] }),
      'relabel configuration for replace action needs targetLabel value',
    ],
    [
      'an action outside the CRD enum',
      defaultSpec({ relabelings: [{ action: 'KEEP' }] }),
      'relabelings[0].action: "KEEP" is not a relabel action',
    ],
  ])('fails on %s', (_, spec, message) => {
    expect(() => scrapeConfigs([podMonitor(spec)], noFiles)).toThrow(message);
  });

  test('fails on a PodMonitor without a namespace, or given twice', () => {
    const pm = podMonitor(defaultSpec());
    expect(() => scrapeConfigs([{ ...pm, metadata: { name: 'x' } }], noFiles)).toThrow('PodMonitor x: metadata.namespace is missing');
    expect(() => scrapeConfigs([pm, pm], noFiles)).toThrow('PodMonitor default/defaultPodMonitor: given twice');
  });
});

const prometheus = requires(PROMETHEUS);
const describeProm = prometheus.describe;
const vmagent = requires(VMAGENT);
const describeVm = vmagent.describe;
/** The real-API scrapers share one control plane: its describe runs when either scraper is installed. */
const describeScrapers = prometheus.ok || vmagent.ok ? describe : describe.skip;
const testProm = prometheus.test;
const testVm = vmagent.test;

describeProm('promtool', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'prom-support-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('GIVEN a config of every supported field THEN Prometheus 2.42 accepts it, files included', async () => {
    const file = (name: string) => {
      const f = join(dir, name);
      writeFileSync(f, 'placeholder\n');
      return f;
    };
    const cfgs = scrapeConfigs(
      [
        podMonitor({
          jobLabel: 'app.kubernetes.io/component',
          podTargetLabels: ['app.kubernetes.io/instance'],
          namespaceSelector: { any: true },
          selector: {
            matchLabels: { a: 'b' },
            matchExpressions: [
              { key: 'c', operator: 'NotIn', values: ['d'] },
              { key: 'e', operator: 'DoesNotExist' },
            ],
          },
          podMetricsEndpoints: [
            { portNumber: 10080, interval: '1s', scrapeTimeout: '500ms', honorTimestamps: true, params: { x: ['y'] } },
            {
              targetPort: 20160,
              scheme: 'https',
              tlsConfig: {
                ca: { secret: { name: 's', key: 'ca' } },
                cert: { secret: { name: 's', key: 'crt' } },
                keySecret: { name: 's', key: 'key' },
                serverName: 'n',
              },
            },
            {
              port: 'status',
              relabelings: [
                { action: 'labelmap', regex: '__meta_kubernetes_pod_label_(.+)', replacement: 'pod_$1' },
                { action: 'hashmod', sourceLabels: ['a'], targetLabel: 'b', modulus: 3 },
              ],
              metricRelabelings: [{ action: 'labeldrop', regex: 'x' }],
            },
          ],
        }),
      ],
      {
        apiServer: API,
        caFile: file('api-ca'),
        bearerTokenFile: file('token'),
        secretFile: (ns, name, key) => file(`secret_${ns}_${name}_${key}`),
      },
    );
    const res = await checkConfig({ global: { scrape_interval: '1s' }, scrape_configs: cfgs });
    expect(res).toEqual({ ok: true, output: expect.stringContaining('SUCCESS') });
  });

  test("checkRules: a good rule file passes, a bad expression fails with promtool's reason", async () => {
    const good = join(dir, 'good.yml');
    const bad = join(dir, 'bad.yml');
    writeFileSync(good, 'groups:\n- name: g\n  rules:\n  - alert: Down\n    expr: up == 0\n    for: 1m\n');
    writeFileSync(bad, 'groups:\n- name: g\n  rules:\n  - alert: Down\n    expr: up ==\n');
    expect(await checkRules([good])).toEqual({ ok: true, output: expect.stringContaining('SUCCESS: 1 rules found') });
    const res = await checkRules([bad]);
    expect(res.ok).toBe(false);
    expect(res.output).toContain('FAILED');
  });
});

describeVm('vmagent config check (vmagent 1.79, -promscrape.config.strictParse)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'vmagent-support-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('GIVEN a config of every supported field THEN vmagent parses it strictly, TLS files included', async () => {
    // vmagent loads a scrape config's TLS files with the config: they must be a real certificate and key.
    const crt = join(dir, 'tls.crt');
    const key = join(dir, 'tls.key');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        key,
        '-out',
        crt,
        '-subj',
        '/CN=vmagent-support',
        '-days',
        '1',
      ],
      { stdio: 'ignore' },
    );
    writeFileSync(join(dir, 'token'), 'placeholder\n');
    const cfgs = scrapeConfigs(
      [
        podMonitor({
          jobLabel: 'app.kubernetes.io/component',
          podTargetLabels: ['app.kubernetes.io/instance'],
          namespaceSelector: { any: true },
          selector: {
            matchLabels: { a: 'b' },
            matchExpressions: [
              { key: 'c', operator: 'NotIn', values: ['d'] },
              { key: 'e', operator: 'DoesNotExist' },
            ],
          },
          podMetricsEndpoints: [
            {
              portNumber: 10080,
              interval: '1s',
              scrapeTimeout: '500ms',
              honorLabels: true,
              honorTimestamps: true,
              filterRunning: false,
              params: { x: ['y'] },
            },
            {
              targetPort: 20160,
              scheme: 'https',
              tlsConfig: {
                ca: { secret: { name: 's', key: 'ca' } },
                cert: { secret: { name: 's', key: 'crt' } },
                keySecret: { name: 's', key: 'key' },
                serverName: 'n',
                insecureSkipVerify: false,
              },
            },
            {
              port: 'status',
              relabelings: [
                { action: 'labelmap', regex: '__meta_kubernetes_pod_label_(.+)', replacement: 'pod_$1' },
                { action: 'HashMod', sourceLabels: ['a'], targetLabel: 'b', modulus: 3 },
                { action: 'Lowercase', sourceLabels: ['a'], targetLabel: 'c' },
                { action: 'labelkeep', regex: '.+' },
              ],
              metricRelabelings: [
                { action: 'labeldrop', regex: 'x' },
                { sourceLabels: ['__name__'], regex: 'go_.*', action: 'drop' },
              ],
            },
          ],
        }),
      ],
      {
        apiServer: API,
        caFile: crt,
        bearerTokenFile: join(dir, 'token'),
        insecureSkipVerify: false,
        secretFile: (_ns, _name, k) => (k === 'key' ? key : crt),
      },
    );
    const res = await checkVmagentConfig({ global: { scrape_interval: '1s' }, scrape_configs: cfgs });
    expect(res).toEqual({ ok: true, output: '' });
  });

  test('GIVEN what Prometheus 2.42 knows and vmagent 1.79 does not THEN vmagent refuses the config, naming it', async () => {
    // scrapeConfigs passes a KeepEqual relabeling through (the operator does): vmagent 1.79 has no keepequal action.
    const keepEqual = scrapeConfigs(
      [podMonitor(defaultSpec({ relabelings: [{ action: 'KeepEqual', sourceLabels: ['a'], targetLabel: 'b' }] }))],
      noFiles,
    );
    expect(await checkVmagentConfig({ scrape_configs: keepEqual })).toEqual({
      ok: false,
      output: expect.stringContaining('unknown `action` "keepequal"'),
    });
    // A Prometheus global setting that vmagent has no use for is an unknown field under strictParse.
    expect(await checkVmagentConfig({ global: { scrape_interval: '1s', evaluation_interval: '1s' }, scrape_configs: [] })).toEqual({
      ok: false,
      output: expect.stringContaining('field evaluation_interval not found'),
    });
  });
});

describeScrapers('a real Prometheus, and a real vmagent, against a real API server', () => {
  const suite = realApiSuite();
  jest.setTimeout(240_000);

  let prom: Prom | undefined;
  let vm: Vmagent | undefined;
  let dir: string | undefined;
  const servers: Server[] = [];
  afterEach(async () => {
    await prom?.stop();
    prom = undefined;
    await vm?.stop();
    vm = undefined;
    for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  /** A `/metrics` page on `host`, on a port of its own. */
  async function metricsServer(host: string, body: string): Promise<number> {
    const server = createServer((req, res) => {
      if (new URL(req.url ?? '/', 'http://x').pathname !== '/metrics') {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(body);
    });
    servers.push(server);
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, host, () => resolve()));
    return (server.address() as AddressInfo).port;
  }

  const labels = (component: string) => ({
    'app.kubernetes.io/name': 'tidb-cluster',
    'app.kubernetes.io/managed-by': 'tidb-operator',
    'app.kubernetes.io/instance': 'basic',
    'app.kubernetes.io/component': component,
  });

  /**
   * The cases' world: a namespace with two "pods" serving /metrics on loopback (the PodMonitor's
   * basic-pd-0 at 127.0.0.1, and basic-tikv-0 at 127.0.0.2, which would be up too if it were
   * selected), a scraper account `sa`, and the PodMonitor's scrape configs.
   */
  async function twoPods(ns: string, sa: string, verbs: readonly string[]) {
    const cp = suite.cp();
    const kube = cp.admin();
    dir = mkdtempSync(join(tmpdir(), `${ns}-`));

    // Two "pods" on loopback: the PodMonitor's one at 127.0.0.1, another that would be up too if it were selected.
    const pdPort = await metricsServer(
      '127.0.0.1',
      '# TYPE demo_requests_total counter\ndemo_requests_total 7\n# TYPE demo_dropped_total counter\ndemo_dropped_total 3\n',
    );
    const tikvPort = await metricsServer('127.0.0.2', 'demo_requests_total 1\n');

    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    // ServiceAccount admission needs the namespace's default ServiceAccount before any Pod.
    await waitUntil(
      async () => (await kube.get(`/api/v1/namespaces/${ns}/serviceaccounts/default`)) !== undefined,
      60_000,
      'the default ServiceAccount',
    );

    // The scraper's credentials: a token that may only read Pods in the namespace, and the cluster CA.
    const tokenFile = await scraperAccount(kube, ns, sa, dir, verbs);

    const pod = async (name: string, component: string, ip: string, port: number) => {
      await kube.create({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: ns, labels: labels(component) },
        spec: {
          automountServiceAccountToken: false,
          containers: [
            {
              name: component,
              image: `pingcap/${component}:v8.5.1`,
              ports: [
                { name: 'client', containerPort: 2379 },
                { name: 'status', containerPort: port },
              ],
            },
          ],
        },
      });
      // No kubelet: the status a kubelet would report, through the status subresource.
      await kube.patch(`/api/v1/namespaces/${ns}/pods/${name}/status`, 'merge', {
        status: { phase: 'Running', hostIP: '127.0.0.1', hostIPs: [{ ip: '127.0.0.1' }], podIP: ip, podIPs: [{ ip }] },
      });
    };
    await pod('basic-pd-0', 'pd', '127.0.0.1', pdPort);
    await pod('basic-tikv-0', 'tikv', '127.0.0.2', tikvPort);

    const pm = {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PodMonitor',
      metadata: { name: 'basic-pd', namespace: ns },
      spec: {
        jobLabel: 'app.kubernetes.io/component',
        podTargetLabels: ['app.kubernetes.io/instance'],
        selector: {
          matchLabels: { 'app.kubernetes.io/instance': 'basic' },
          matchExpressions: [
            { key: 'app.kubernetes.io/component', operator: 'In', values: ['pd'] },
            { key: 'app.kubernetes.io/managed-by', operator: 'Exists' },
          ],
        },
        podMetricsEndpoints: [
          {
            port: 'status',
            path: '/metrics',
            params: { collect: ['all'] },
            relabelings: [{ targetLabel: 'tidb_cluster', replacement: 'basic' }],
            metricRelabelings: [{ sourceLabels: ['__name__'], regex: 'demo_dropped_total', action: 'drop' }],
          },
        ],
      },
    };
    const scrape = scrapeConfigs([pm], {
      apiServer: cp.server,
      caFile: cp.pki.caCert,
      bearerTokenFile: tokenFile,
      secretFile: () => {
        throw new Error('no secrets in this PodMonitor');
      },
    });
    return { cp, ns, pdPort, tikvPort, tokenFile, scrape };
  }

  testProm(
    "GIVEN two Pods and a PodMonitor selecting one THEN Prometheus scrapes exactly that Pod's named port, with the relabeled labels",
    async () => {
      const { cp, ns, pdPort, scrape } = await twoPods('prom-support', 'prometheus', ['get', 'list', 'watch']);

      // Started with nothing to scrape, then given the PodMonitor's jobs by a reload.
      prom = await startPrometheus({ config: { global: { scrape_interval: '1s', evaluation_interval: '1s' }, scrape_configs: [] }, dir });
      expect(await prom.targets()).toEqual([]);
      await prom.reload({ global: { scrape_interval: '1s', evaluation_interval: '1s' }, scrape_configs: scrape });

      const p = prom;
      // Discovery has seen both pods once the tikv pod and the pd pod's client port show among the dropped targets.
      const dropped = await p.waitFor(
        async () => {
          const d = (await p.droppedTargets()).map(
            (t) => `${t.discoveredLabels.__meta_kubernetes_pod_name}:${t.discoveredLabels.__meta_kubernetes_pod_container_port_name}`,
          );
          return ['basic-pd-0:client', 'basic-tikv-0:client', 'basic-tikv-0:status'].every((x) => d.includes(x)) ? d : undefined;
        },
        60_000,
        'service discovery to drop the other pod and port',
      );
      expect(dropped.sort()).toEqual(['basic-pd-0:client', 'basic-tikv-0:client', 'basic-tikv-0:status']);

      const [target] = await p.waitFor(
        async () => {
          const ts = await p.targets();
          return ts.length === 1 && ts[0].health === 'up' ? ts : undefined;
        },
        60_000,
        'the pd pod to be scraped',
      );
      expect(await p.targets()).toHaveLength(1);
      expect(target).toMatchObject({
        scrapePool: `podMonitor/${ns}/basic-pd/0`,
        scrapeUrl: `http://127.0.0.1:${pdPort}/metrics?collect=all`,
        health: 'up',
        labels: {
          instance: `127.0.0.1:${pdPort}`,
          job: 'pd',
          namespace: ns,
          pod: 'basic-pd-0',
          container: 'pd',
          endpoint: 'status',
          app_kubernetes_io_instance: 'basic',
          tidb_cluster: 'basic',
        },
      });
      expect(Object.keys(target.labels).sort()).toEqual([
        'app_kubernetes_io_instance',
        'container',
        'endpoint',
        'instance',
        'job',
        'namespace',
        'pod',
        'tidb_cluster',
      ]);

      // The samples of a scrape carry the target's labels; the metric relabeling dropped the other metric of that scrape.
      const [sample] = await p.waitFor(
        async () => {
          const r = await p.query('demo_requests_total');
          return r.length > 0 ? r : undefined;
        },
        60_000,
        'a scraped sample',
      );
      expect(sample.metric).toEqual({ __name__: 'demo_requests_total', ...target.labels });
      expect(sample.value[1]).toBe('7');
      expect(await p.query('demo_dropped_total')).toEqual([]);
      expect(await p.query('count(up)')).toEqual([expect.objectContaining({ value: [expect.any(Number), '1'] })]);

      // Discovery read the Pods as Prometheus's ServiceAccount, and RBAC let it.
      const asPrometheus = cp.audit().filter((r) => r.user === `system:serviceaccount:${ns}:prometheus`);
      expect(asPrometheus.filter((r) => r.resource === 'pods' && r.verb === 'list' && r.code === 200).length).toBeGreaterThan(0);
      expect(asPrometheus.filter((r) => r.code === 403)).toEqual([]);
    },
  );

  testVm(
    "GIVEN two Pods and a PodMonitor selecting one THEN vmagent, discovering them itself with a pods-only token, scrapes exactly that Pod's named port, with the relabeled labels",
    async () => {
      const { cp, ns, pdPort, tokenFile, scrape } = await twoPods('vmagent-support', 'vmagent', ['list', 'watch']);
      const sa = 'vmagent';
      // Discovery is vmagent's own, from exactly what scrapeConfigs wrote.
      expect(scrape[0].kubernetes_sd_configs).toEqual([
        {
          role: 'pod',
          namespaces: { names: [ns] },
          api_server: cp.server,
          bearer_token_file: tokenFile,
          tls_config: { ca_file: cp.pki.caCert },
        },
      ]);

      // Started with nothing to scrape, then given the PodMonitor's jobs by a reload.
      const global = { scrape_interval: '1s' };
      vm = await startVmagent({ config: { global, scrape_configs: [] }, dir });
      expect(await vm.targets()).toEqual([]);
      await vm.reload({ global, scrape_configs: scrape });

      const v = vm;
      // Discovery has seen both pods once the tikv pod and the pd pod's client port show among the dropped targets.
      const dropped = await v.waitFor(
        async () => {
          const d = (await v.droppedTargets()).map(
            (t) => `${t.discoveredLabels.__meta_kubernetes_pod_name}:${t.discoveredLabels.__meta_kubernetes_pod_container_port_name}`,
          );
          return ['basic-pd-0:client', 'basic-tikv-0:client', 'basic-tikv-0:status'].every((x) => d.includes(x)) ? d : undefined;
        },
        60_000,
        'service discovery to drop the other pod and port',
      );
      expect(dropped.sort()).toEqual(['basic-pd-0:client', 'basic-tikv-0:client', 'basic-tikv-0:status']);

      const [target] = await v.waitFor(
        async () => {
          const ts = await v.targets();
          return ts.length === 1 && ts[0].health === 'up' ? ts : undefined;
        },
        60_000,
        'the pd pod to be scraped',
      );
      const targets = await v.targets();
      expect(targets).toHaveLength(1);
      expect(targets.filter((t) => t.discoveredLabels.__meta_kubernetes_pod_name !== 'basic-pd-0')).toEqual([]);
      expect(target).toMatchObject({
        // vmagent 1.79 names the scrape pool after the target's job label; the job_name is the discovered `job`.
        scrapePool: 'pd',
        scrapeUrl: `http://127.0.0.1:${pdPort}/metrics?collect=all`,
        health: 'up',
        lastError: '',
        labels: {
          instance: `127.0.0.1:${pdPort}`,
          job: 'pd',
          namespace: ns,
          pod: 'basic-pd-0',
          container: 'pd',
          endpoint: 'status',
          app_kubernetes_io_instance: 'basic',
          tidb_cluster: 'basic',
        },
        discoveredLabels: expect.objectContaining({
          job: `podMonitor/${ns}/basic-pd/0`,
          __address__: `127.0.0.1:${pdPort}`,
          __meta_kubernetes_namespace: ns,
          __meta_kubernetes_pod_name: 'basic-pd-0',
          __meta_kubernetes_pod_ip: '127.0.0.1',
          __meta_kubernetes_pod_phase: 'Running',
          __meta_kubernetes_pod_container_name: 'pd',
          __meta_kubernetes_pod_container_port_name: 'status',
          __meta_kubernetes_pod_container_port_number: String(pdPort),
          __meta_kubernetes_pod_label_app_kubernetes_io_component: 'pd',
          __meta_kubernetes_pod_labelpresent_app_kubernetes_io_managed_by: 'true',
        }),
      });
      expect(Object.keys(target.labels).sort()).toEqual([
        'app_kubernetes_io_instance',
        'container',
        'endpoint',
        'instance',
        'job',
        'namespace',
        'pod',
        'tidb_cluster',
      ]);

      // What vmagent remote-wrote carries the target's labels; the metric relabeling dropped the other metric of that scrape.
      const sample = await v.waitFor(
        async () => v.written().find((s) => s.labels.__name__ === 'demo_requests_total'),
        60_000,
        'a remote-written sample',
      );
      expect(sample.labels).toEqual({ __name__: 'demo_requests_total', ...target.labels });
      expect(sample.value).toBe(7);
      const up = await v.waitFor(async () => v.written().find((s) => s.labels.__name__ === 'up'), 60_000, 'the up series');
      expect(up).toMatchObject({ labels: { __name__: 'up', ...target.labels }, value: 1 });
      expect(v.written().filter((s) => s.labels.__name__ === 'demo_dropped_total')).toEqual([]);
      expect(v.written().filter((s) => s.labels.pod !== 'basic-pd-0' || s.labels.instance !== `127.0.0.1:${pdPort}`)).toEqual([]);

      // Discovery read the Pods as vmagent's ServiceAccount, with a list then a watch, and RBAC let it.
      const asVmagent = () => cp.audit().filter((r) => r.user === `system:serviceaccount:${ns}:${sa}`);
      await waitUntil(
        async () => ['list', 'watch'].every((verb) => asVmagent().some((r) => r.verb === verb && r.code === 200)),
        60_000,
        "the audit records of vmagent's list and watch",
      );
      const seen = asVmagent().map((r) => `${r.verb} ${r.resource} ${r.namespace} ${r.code}`);
      expect([...new Set(seen)].sort()).toEqual([`list pods ${ns} 200`, `watch pods ${ns} 200`]);
    },
  );
});

async function waitUntil(pred: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
