/**
 * PodMonitors (`monitoring.coreos.com/v1`) turned into Prometheus `scrape_configs`, rule for rule as
 * prometheus-operator v0.93.0 (commit 6adcebc5076c, 2026-08-08) generates them, so that a real
 * Prometheus in the tests scrapes exactly what the rendered PodMonitors select, with no operator.
 *
 * Sources, in the prometheus-operator repository:
 * - `pkg/prometheus/promcfg.go`: `appendPodMonitorConfigs` (order, job names),
 *   `generatePodMonitorConfig` (the scrape config), `generateK8SSDConfig` and
 *   `getNamespacesFromNamespaceSelector` (service discovery), `addHTTPConfigToYAML` /
 *   `addTLStoYaml` / `addSafeTLStoYaml` (TLS), `generateRelabelConfig`, `initRelabelings`,
 *   `generateRunningFilter`, `appendShardingRelabelingWithLabel`, `sanitizeLabelName`;
 * - `pkg/prometheus/resource_selector.go` `checkPodMonitor` and
 *   `pkg/prometheus/validation/validator.go` `ValidateRelabelConfig` (what the operator refuses);
 * - `pkg/apis/monitoring/v1/podmonitor_types.go`, `types.go`, `tls_types.go` (the fields).
 *
 * Where the operator logs and skips a PodMonitor it refuses, this throws: a test must not lose a
 * monitor silently. Every field it does not reproduce throws too, naming the field. Pure: files come
 * from the callbacks, nothing is read or written here.
 */
import type { Obj } from '../kube/client';

export interface ScrapeConfigOptions {
  /** The kube-apiserver URL for service discovery (the Prometheus CR's `apiserverConfig.host`). */
  readonly apiServer: string;
  /** CA bundle that verifies the API server (`apiserverConfig.tlsConfig.caFile`). */
  readonly caFile?: string;
  /** Bearer token file for the API server (`apiserverConfig.bearerTokenFile`). */
  readonly bearerTokenFile?: string;
  /** Client certificate for the API server (`apiserverConfig.tlsConfig.certFile`). */
  readonly certFile?: string;
  /** Client key for the API server (`apiserverConfig.tlsConfig.keyFile`). */
  readonly keyFile?: string;
  /** `apiserverConfig.tlsConfig.insecureSkipVerify`. */
  readonly insecureSkipVerify?: boolean;
  /**
   * Writes (or knows) the file holding key `key` of Secret `namespace/name` and returns its path: the
   * operator's `/etc/prometheus/certs/secret_<ns>_<name>_<key>`. May throw for a missing Secret, as
   * the operator refuses such a PodMonitor.
   */
  readonly secretFile: (namespace: string, name: string, key: string) => string;
  /** Same for a ConfigMap key (`tlsConfig.ca.configMap`, `tlsConfig.cert.configMap`). @default a ConfigMap reference throws */
  readonly configMapFile?: (namespace: string, name: string, key: string) => string;
}

/** One scrape config per endpoint of each PodMonitor, in the operator's order. */
export function scrapeConfigs(podMonitors: Obj[], opts: ScrapeConfigOptions): Obj[] {
  const byKey = new Map<string, Obj>();
  for (const pm of podMonitors) {
    const key = identify(pm);
    if (byKey.has(key)) throw new Error(`PodMonitor ${key}: given twice`);
    byKey.set(key, pm);
  }
  // promcfg.go appendPodMonitorConfigs: sortutil.SortedKeys over "<namespace>/<name>" (byte order).
  const keys = [...byKey.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const out: Obj[] = [];
  for (const key of keys) {
    const pm = byKey.get(key)!;
    const spec = checkSpec(pm, key);
    spec.endpoints.forEach((ep, i) =>
      out.push(
        podMonitorConfig(pm.metadata.namespace, pm.metadata.name, spec, ep, i, opts, `PodMonitor ${key}: spec.podMetricsEndpoints[${i}]`),
      ),
    );
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The scrape config (promcfg.go generatePodMonitorConfig)

function podMonitorConfig(namespace: string, name: string, spec: Spec, ep: Obj, i: number, opts: ScrapeConfigOptions, where: string): Obj {
  const cfg: Obj = { job_name: `podMonitor/${namespace}/${name}/${i}` };
  // AddHonorLabels: always written (no overrideHonorLabels on our Prometheus).
  cfg.honor_labels = ep.honorLabels ?? false;
  // AddHonorTimestamps: only when the endpoint says (no overrideHonorTimestamps).
  if (ep.honorTimestamps !== undefined) cfg.honor_timestamps = ep.honorTimestamps;
  cfg.kubernetes_sd_configs = [k8sSDConfig(spec.namespaceSelector, namespace, opts)];
  if (ep.interval) cfg.scrape_interval = ep.interval;
  if (ep.scrapeTimeout) cfg.scrape_timeout = ep.scrapeTimeout;
  if (ep.path) cfg.metrics_path = ep.path;
  // yaml.v2 writes Go maps with sorted keys.
  if (ep.params !== undefined)
    cfg.params = Object.fromEntries(
      Object.keys(ep.params)
        .sort()
        .map((k) => [k, ep.params[k]]),
    );
  // types.go Scheme.String(): lower case.
  if (ep.scheme !== undefined) cfg.scheme = String(ep.scheme).toLowerCase();
  const tls = endpointTLS(ep.tlsConfig, namespace, opts, `${where}.tlsConfig`);
  if (tls) cfg.tls_config = tls;
  cfg.relabel_configs = relabelings(namespace, name, spec, ep);
  // metric_relabel_configs only when there are some (no scrape class, no enforcedNamespaceLabel).
  if ((ep.metricRelabelings ?? []).length > 0) cfg.metric_relabel_configs = generateRelabelConfig(ep.metricRelabelings);
  return cfg;
}

/** promcfg.go generateK8SSDConfig with the Prometheus CR's apiserverConfig, no attachMetadata, no DaemonSet mode. */
function k8sSDConfig(nsel: Obj, namespace: string, opts: ScrapeConfigOptions): Obj {
  const sd: Obj = { role: 'pod' };
  // getNamespacesFromNamespaceSelector: `any` → every namespace (no list); no matchNames → own namespace.
  const names: string[] = nsel.any ? [] : (nsel.matchNames ?? []).length === 0 ? [namespace] : nsel.matchNames;
  if (names.length > 0) sd.namespaces = { names };
  sd.api_server = opts.apiServer;
  // The deprecated bearerTokenFile is written as is; then addTLStoYaml (SafeTLSConfig first, then the *File fields).
  if (opts.bearerTokenFile !== undefined) sd.bearer_token_file = opts.bearerTokenFile;
  if (opts.insecureSkipVerify !== undefined || opts.caFile || opts.certFile || opts.keyFile) {
    const tls: Obj = {};
    if (opts.insecureSkipVerify !== undefined) tls.insecure_skip_verify = opts.insecureSkipVerify;
    if (opts.caFile) tls.ca_file = opts.caFile;
    if (opts.certFile) tls.cert_file = opts.certFile;
    if (opts.keyFile) tls.key_file = opts.keyFile;
    sd.tls_config = tls;
  }
  return sd;
}

/**
 * promcfg.go addHTTPConfigToYAML → mergeSafeTLSConfigWithScrapeClass (a zero tlsConfig is none) →
 * addTLStoYaml → addSafeTLStoYaml: insecure_skip_verify, ca_file, cert_file, key_file, server_name,
 * in that order; files as the operator's TLS assets, here through the callbacks.
 */
function endpointTLS(tls: Obj | undefined, namespace: string, opts: ScrapeConfigOptions, where: string): Obj | undefined {
  if (tls === undefined || Object.keys(tls).length === 0) return undefined;
  const out: Obj = {};
  if (tls.insecureSkipVerify !== undefined) out.insecure_skip_verify = tls.insecureSkipVerify;
  const file = (ref: Obj, field: string): string => {
    if (ref.secret) return opts.secretFile(namespace, ref.secret.name, ref.secret.key);
    if (!opts.configMapFile) throw new Error(`${where}.${field}.configMap: scrapeConfigs was given no configMapFile callback to write it`);
    return opts.configMapFile(namespace, ref.configMap.name, ref.configMap.key);
  };
  if (tls.ca?.secret || tls.ca?.configMap) out.ca_file = file(tls.ca, 'ca');
  if (tls.cert?.secret || tls.cert?.configMap) out.cert_file = file(tls.cert, 'cert');
  if (tls.keySecret) out.key_file = opts.secretFile(namespace, tls.keySecret.name, tls.keySecret.key);
  if (tls.serverName) out.server_name = tls.serverName;
  return out;
}

function relabelings(namespace: string, name: string, spec: Spec, ep: Obj): Obj[] {
  // promcfg.go initRelabelings: the job name kept in a meta label.
  const rs: Obj[] = [{ source_labels: ['job'], target_label: '__tmp_prometheus_job_name' }];
  // promcfg.go generateRunningFilter, unless filterRunning is false.
  if (ep.filterRunning !== false) rs.push({ action: 'drop', source_labels: ['__meta_kubernetes_pod_phase'], regex: '(Failed|Succeeded)' });
  rs.push(...selectorRelabelings(spec.selector));
  rs.push(...portFilter(ep));
  // "Relabel namespace and pod and service labels into proper labels."
  rs.push(
    { source_labels: ['__meta_kubernetes_namespace'], target_label: 'namespace' },
    { source_labels: ['__meta_kubernetes_pod_container_name'], target_label: 'container' },
    { source_labels: ['__meta_kubernetes_pod_name'], target_label: 'pod' },
  );
  // spec.podTargetLabels (our Prometheus has no global podTargetLabels).
  for (const l of spec.podTargetLabels) {
    rs.push({
      source_labels: [`__meta_kubernetes_pod_label_${sanitizeLabelName(l)}`],
      target_label: sanitizeLabelName(l),
      regex: '(.+)',
      replacement: '${1}',
    });
  }
  // The job label: "<namespace>/<name>", replaced by the jobLabel's value where the pod has one.
  rs.push({ target_label: 'job', replacement: `${namespace}/${name}` });
  if (spec.jobLabel) {
    rs.push({
      source_labels: [`__meta_kubernetes_pod_label_${sanitizeLabelName(spec.jobLabel)}`],
      target_label: 'job',
      regex: '(.+)',
      replacement: '${1}',
    });
  }
  // The endpoint label: the port name, else the deprecated targetPort as a string (a number too).
  if (ep.port) rs.push({ target_label: 'endpoint', replacement: ep.port });
  else if (ep.targetPort !== undefined && String(ep.targetPort) !== '')
    rs.push({ target_label: 'endpoint', replacement: String(ep.targetPort) });
  // The endpoint's own relabelings (no scrape class relabelings, no enforcedNamespaceLabel).
  rs.push(...generateRelabelConfig(ep.relabelings ?? []));
  rs.push(...shardingRelabelings());
  return rs;
}

/**
 * promcfg.go generatePodMonitorConfig, selectorMechanism RelabelConfig: matchLabels in sorted key
 * order, then matchExpressions in order; values go into the regex unescaped, as the operator does.
 */
function selectorRelabelings(selector: Obj): Obj[] {
  const rs: Obj[] = [];
  const both = (k: string) => [
    `__meta_kubernetes_pod_label_${sanitizeLabelName(k)}`,
    `__meta_kubernetes_pod_labelpresent_${sanitizeLabelName(k)}`,
  ];
  const present = (k: string) => [`__meta_kubernetes_pod_labelpresent_${sanitizeLabelName(k)}`];
  const labels: Record<string, string> = selector.matchLabels ?? {};
  for (const k of Object.keys(labels).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
    rs.push({ action: 'keep', source_labels: both(k), regex: `(${labels[k]});true` });
  }
  for (const exp of selector.matchExpressions ?? []) {
    switch (exp.operator) {
      case 'In':
        rs.push({ action: 'keep', source_labels: both(exp.key), regex: `(${exp.values.join('|')});true` });
        break;
      case 'NotIn':
        rs.push({ action: 'drop', source_labels: both(exp.key), regex: `(${exp.values.join('|')});true` });
        break;
      case 'Exists':
        rs.push({ action: 'keep', source_labels: present(exp.key), regex: 'true' });
        break;
      case 'DoesNotExist':
        rs.push({ action: 'drop', source_labels: present(exp.key), regex: 'true' });
        break;
    }
  }
  return rs;
}

/** promcfg.go generatePodMonitorConfig: port, else portNumber, else the deprecated targetPort. */
function portFilter(ep: Obj): Obj[] {
  if (ep.port) return [{ action: 'keep', source_labels: ['__meta_kubernetes_pod_container_port_name'], regex: ep.port }];
  // The number goes into the YAML as a number, as the operator writes it; Prometheus reads it as the regex "8080".
  if (ep.portNumber) return [{ action: 'keep', source_labels: ['__meta_kubernetes_pod_container_port_number'], regex: ep.portNumber }];
  if (typeof ep.targetPort === 'string' && ep.targetPort !== '')
    return [{ action: 'keep', source_labels: ['__meta_kubernetes_pod_container_port_name'], regex: ep.targetPort }];
  if (typeof ep.targetPort === 'number' && ep.targetPort !== 0)
    return [{ action: 'keep', source_labels: ['__meta_kubernetes_pod_container_port_number'], regex: ep.targetPort }];
  return [];
}

/** promcfg.go generateRelabelConfig: fields in this order, empty ones left out, the action lower-cased. */
function generateRelabelConfig(rcs: Obj[]): Obj[] {
  return rcs.map((c) => {
    const r: Obj = {};
    if ((c.sourceLabels ?? []).length > 0) r.source_labels = c.sourceLabels;
    if (c.separator !== undefined) r.separator = c.separator;
    if (c.targetLabel) r.target_label = c.targetLabel;
    if (c.regex) r.regex = c.regex;
    if (c.modulus) r.modulus = c.modulus;
    if (c.replacement !== undefined) r.replacement = c.replacement;
    if (c.action) r.action = String(c.action).toLowerCase();
    return r;
  });
}

/**
 * promcfg.go appendShardingRelabelingWithLabel for one shard (no retention policies, no topology
 * sharding): the operator writes `$(SHARD)`, which its config reloader replaces with the shard
 * number from the Pod's environment before Prometheus reads the file; one shard is shard 0.
 */
function shardingRelabelings(): Obj[] {
  return [
    { source_labels: ['__address__', '__tmp_hash'], target_label: '__tmp_hash', regex: '(.+);', replacement: '$1', action: 'replace' },
    { source_labels: ['__tmp_hash'], target_label: '__tmp_hash', modulus: 1, action: 'hashmod' },
    { source_labels: ['__tmp_hash', '__tmp_disable_sharding'], regex: '0;|.+;.+', action: 'keep' },
  ];
}

/** promcfg.go sanitizeLabelName (the same rule Prometheus applies to `__meta_kubernetes_pod_label_*`). */
export function sanitizeLabelName(name: string): string {
  return name.replace(/[^a-zA-Z0-9_]/g, '_');
}

// ---------------------------------------------------------------------------------------------
// What the operator accepts (checkPodMonitor, the CRD), and what this file reproduces

interface Spec {
  readonly selector: Obj;
  readonly namespaceSelector: Obj;
  readonly jobLabel: string;
  readonly podTargetLabels: string[];
  readonly endpoints: Obj[];
}

const SPEC_FIELDS = ['selector', 'selectorMechanism', 'namespaceSelector', 'jobLabel', 'podTargetLabels', 'podMetricsEndpoints'];
const ENDPOINT_FIELDS = [
  'port',
  'portNumber',
  'targetPort',
  'path',
  'scheme',
  'params',
  'interval',
  'scrapeTimeout',
  'honorLabels',
  'honorTimestamps',
  'relabelings',
  'metricRelabelings',
  'tlsConfig',
  'filterRunning',
];
const TLS_FIELDS = ['ca', 'cert', 'keySecret', 'serverName', 'insecureSkipVerify'];
const RELABEL_FIELDS = ['sourceLabels', 'separator', 'targetLabel', 'regex', 'modulus', 'replacement', 'action'];
// prometheus_types.go RelabelConfig.action: the CRD's enum.
const RELABEL_ACTIONS = [
  'replace',
  'Replace',
  'keep',
  'Keep',
  'drop',
  'Drop',
  'hashmod',
  'HashMod',
  'labelmap',
  'LabelMap',
  'labeldrop',
  'LabelDrop',
  'labelkeep',
  'LabelKeep',
  'lowercase',
  'Lowercase',
  'uppercase',
  'Uppercase',
  'keepequal',
  'KeepEqual',
  'dropequal',
  'DropEqual',
];
// types.go Duration's pattern.
const DURATION = /^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
// validator.go relabelTargetLegacy: a label name that may hold $1 / ${1} references.
const LABEL_NAME_WITH_VARS = /^(?:(?:[a-zA-Z_]|\$(?:\{\w+\}|\w+))+\w*)+$/;

function identify(pm: Obj): string {
  if (pm?.apiVersion !== 'monitoring.coreos.com/v1' || pm?.kind !== 'PodMonitor') {
    throw new Error(`expected a monitoring.coreos.com/v1 PodMonitor, got ${pm?.apiVersion}/${pm?.kind}`);
  }
  const { name, namespace } = pm.metadata ?? {};
  if (typeof name !== 'string' || name === '') throw new Error('PodMonitor: metadata.name is missing');
  if (typeof namespace !== 'string' || namespace === '')
    throw new Error(`PodMonitor ${name}: metadata.namespace is missing; the operator reads PodMonitors from the API, where each has one`);
  return `${namespace}/${name}`;
}

function checkSpec(pm: Obj, key: string): Spec {
  const at = `PodMonitor ${key}: spec`;
  const spec = object(pm.spec, at);
  onlyFields(spec, SPEC_FIELDS, at);
  const selector = checkSelector(spec.selector, `${at}.selector`);
  // The default mechanism; RoleSelector (SD-side `selectors`) is not reproduced.
  if (spec.selectorMechanism !== undefined && spec.selectorMechanism !== 'RelabelConfig') {
    throw new Error(
      `${at}.selectorMechanism: ${JSON.stringify(spec.selectorMechanism)} is not supported by scrapeConfigs; only RelabelConfig (the default) is`,
    );
  }
  const namespaceSelector = object(spec.namespaceSelector ?? {}, `${at}.namespaceSelector`);
  onlyFields(namespaceSelector, ['any', 'matchNames'], `${at}.namespaceSelector`);
  if (namespaceSelector.any !== undefined) bool(namespaceSelector.any, `${at}.namespaceSelector.any`);
  if (namespaceSelector.matchNames !== undefined) strings(namespaceSelector.matchNames, `${at}.namespaceSelector.matchNames`);
  const jobLabel = spec.jobLabel === undefined ? '' : str(spec.jobLabel, `${at}.jobLabel`);
  const podTargetLabels = spec.podTargetLabels === undefined ? [] : strings(spec.podTargetLabels, `${at}.podTargetLabels`);
  if (spec.podMetricsEndpoints === undefined) throw new Error(`${at}.podMetricsEndpoints: required field is missing`);
  const endpoints = array(spec.podMetricsEndpoints, `${at}.podMetricsEndpoints`).map((ep, i) =>
    checkEndpoint(ep, `${at}.podMetricsEndpoints[${i}]`),
  );
  return { selector, namespaceSelector, jobLabel, podTargetLabels, endpoints };
}

/** What metav1.LabelSelectorAsSelector refuses (checkPodMonitor's first check). */
function checkSelector(sel: unknown, at: string): Obj {
  if (sel === undefined) throw new Error(`${at}: required field is missing`);
  const s = object(sel, at);
  onlyFields(s, ['matchLabels', 'matchExpressions'], at);
  for (const [k, v] of Object.entries(object(s.matchLabels ?? {}, `${at}.matchLabels`))) {
    labelKey(k, `${at}.matchLabels`);
    labelValue(str(v, `${at}.matchLabels.${k}`), `${at}.matchLabels.${k}`);
  }
  array(s.matchExpressions ?? [], `${at}.matchExpressions`).forEach((e, i) => {
    const w = `${at}.matchExpressions[${i}]`;
    const exp = object(e, w);
    onlyFields(exp, ['key', 'operator', 'values'], w);
    labelKey(str(exp.key, `${w}.key`), `${w}.key`);
    const values = exp.values === undefined ? [] : strings(exp.values, `${w}.values`);
    values.forEach((v, j) => labelValue(v, `${w}.values[${j}]`));
    if (exp.operator === 'In' || exp.operator === 'NotIn') {
      if (values.length === 0) throw new Error(`${w}.values: must be non-empty for operator ${exp.operator}`);
    } else if (exp.operator === 'Exists' || exp.operator === 'DoesNotExist') {
      if (values.length > 0) throw new Error(`${w}.values: must be empty for operator ${exp.operator}`);
    } else {
      throw new Error(`${w}.operator: ${JSON.stringify(exp.operator)} is not a valid selector operator (In, NotIn, Exists, DoesNotExist)`);
    }
  });
  return s;
}

function checkEndpoint(raw: unknown, at: string): Obj {
  const ep = object(raw, at);
  onlyFields(ep, ENDPOINT_FIELDS, at);
  if (ep.port !== undefined) str(ep.port, `${at}.port`);
  if (ep.portNumber !== undefined && !(Number.isInteger(ep.portNumber) && ep.portNumber >= 1 && ep.portNumber <= 65535)) {
    throw new Error(`${at}.portNumber: expected an integer from 1 to 65535, got ${JSON.stringify(ep.portNumber)}`);
  }
  if (ep.targetPort !== undefined && typeof ep.targetPort !== 'string' && !Number.isInteger(ep.targetPort)) {
    throw new Error(`${at}.targetPort: expected a port name or number, got ${JSON.stringify(ep.targetPort)}`);
  }
  if (ep.path !== undefined) str(ep.path, `${at}.path`);
  if (ep.scheme !== undefined && !['http', 'https', 'HTTP', 'HTTPS'].includes(ep.scheme)) {
    throw new Error(`${at}.scheme: expected http or https, got ${JSON.stringify(ep.scheme)}`);
  }
  if (ep.params !== undefined) for (const [k, v] of Object.entries(object(ep.params, `${at}.params`))) strings(v, `${at}.params.${k}`);
  for (const f of ['interval', 'scrapeTimeout'] as const) {
    if (ep[f] !== undefined && !DURATION.test(str(ep[f], `${at}.${f}`)))
      throw new Error(`${at}.${f}: expected a duration such as 30s or 1m, got ${JSON.stringify(ep[f])}`);
  }
  // resource_selector.go validateScrapeIntervalAndTimeout (the global interval is unknown here: Prometheus checks that one).
  if (ep.interval && ep.scrapeTimeout && durationMs(ep.scrapeTimeout) > durationMs(ep.interval)) {
    throw new Error(`${at}.scrapeTimeout: ${ep.scrapeTimeout} is greater than interval ${ep.interval}`);
  }
  for (const f of ['honorLabels', 'honorTimestamps', 'filterRunning'] as const) if (ep[f] !== undefined) bool(ep[f], `${at}.${f}`);
  for (const f of ['relabelings', 'metricRelabelings'] as const) {
    if (ep[f] !== undefined) array(ep[f], `${at}.${f}`).forEach((rc, i) => checkRelabelConfig(rc, `${at}.${f}[${i}]`));
  }
  if (ep.tlsConfig !== undefined) checkTLS(ep.tlsConfig, `${at}.tlsConfig`);
  return ep;
}

/** validator.go ValidateRelabelConfig for Prometheus 2.42 (legacy label names; RE2 syntax is left to Prometheus). */
function checkRelabelConfig(raw: unknown, at: string): void {
  const rc = object(raw, at);
  onlyFields(rc, RELABEL_FIELDS, at);
  if (rc.sourceLabels !== undefined) strings(rc.sourceLabels, `${at}.sourceLabels`);
  for (const f of ['separator', 'targetLabel', 'regex', 'replacement'] as const) if (rc[f] !== undefined) str(rc[f], `${at}.${f}`);
  if (rc.modulus !== undefined && !(Number.isInteger(rc.modulus) && rc.modulus >= 0))
    throw new Error(`${at}.modulus: expected a non-negative integer, got ${JSON.stringify(rc.modulus)}`);
  if (rc.action !== undefined && !RELABEL_ACTIONS.includes(str(rc.action, `${at}.action`))) {
    throw new Error(
      `${at}.action: ${JSON.stringify(rc.action)} is not a relabel action (${RELABEL_ACTIONS.filter((_, i) => i % 2 === 0).join(', ')})`,
    );
  }
  const action: string = (rc.action ?? 'replace').toLowerCase();
  const target: string = rc.targetLabel ?? '';
  if (action === 'hashmod' && !rc.modulus) throw new Error(`${at}: relabel configuration for hashmod requires non-zero modulus`);
  if (['replace', 'hashmod', 'lowercase', 'uppercase', 'keepequal', 'dropequal'].includes(action)) {
    if (target === '') throw new Error(`${at}: relabel configuration for ${action} action needs targetLabel value`);
    if (!LABEL_NAME.test(target))
      throw new Error(`${at}.targetLabel: ${JSON.stringify(target)} is invalid 'target_label' for ${action} action`);
  }
  if (['lowercase', 'uppercase', 'keepequal', 'dropequal'].includes(action) && rc.replacement !== undefined && rc.replacement !== '$1') {
    throw new Error(`${at}.replacement: 'replacement' can not be set for ${action} action`);
  }
  if (action === 'labelmap' && rc.replacement !== undefined && !LABEL_NAME_WITH_VARS.test(rc.replacement)) {
    throw new Error(`${at}.replacement: ${JSON.stringify(rc.replacement)} is invalid 'replacement' for labelmap action`);
  }
  if (
    (action === 'keepequal' || action === 'dropequal') &&
    ((rc.regex && rc.regex !== '(.*)') || (rc.modulus && rc.modulus !== 0) || (rc.separator !== undefined && rc.separator !== ';'))
  ) {
    throw new Error(`${at}: ${action} action requires only 'source_labels' and 'target_label', and no other fields`);
  }
  if (
    (action === 'labeldrop' || action === 'labelkeep') &&
    ((rc.sourceLabels ?? []).length > 0 ||
      target !== '' ||
      rc.modulus ||
      (rc.separator !== undefined && rc.separator !== ';') ||
      (rc.replacement !== undefined && rc.replacement !== '$1'))
  ) {
    throw new Error(`${at}: ${action} action requires only 'regex', and no other fields`);
  }
}

/** tls_types.go SafeTLSConfig.Validate and SecretOrConfigMap.Validate. */
function checkTLS(raw: unknown, at: string): void {
  const tls = object(raw, at);
  onlyFields(tls, TLS_FIELDS, at);
  const hasRef = (f: 'ca' | 'cert'): boolean => {
    if (tls[f] === undefined) return false;
    const ref = object(tls[f], `${at}.${f}`);
    onlyFields(ref, ['secret', 'configMap'], `${at}.${f}`);
    if (ref.secret !== undefined && ref.configMap !== undefined) throw new Error(`${at}.${f}: cannot specify both Secret and ConfigMap`);
    if (ref.secret !== undefined) keySelector(ref.secret, `${at}.${f}.secret`);
    if (ref.configMap !== undefined) keySelector(ref.configMap, `${at}.${f}.configMap`);
    return ref.secret !== undefined || ref.configMap !== undefined;
  };
  hasRef('ca');
  const hasCert = hasRef('cert');
  if (tls.keySecret !== undefined) keySelector(tls.keySecret, `${at}.keySecret`);
  if (hasCert && tls.keySecret === undefined) throw new Error(`${at}: client cert specified without client key`);
  if (!hasCert && tls.keySecret !== undefined) throw new Error(`${at}: client key specified without client cert`);
  if (tls.serverName !== undefined) str(tls.serverName, `${at}.serverName`);
  if (tls.insecureSkipVerify !== undefined) bool(tls.insecureSkipVerify, `${at}.insecureSkipVerify`);
}

function keySelector(raw: unknown, at: string): void {
  const sel = object(raw, at);
  onlyFields(sel, ['name', 'key'], at);
  if (!str(sel.name, `${at}.name`)) throw new Error(`${at}.name: must not be empty`);
  if (!str(sel.key, `${at}.key`)) throw new Error(`${at}.key: must not be empty`);
}

/** Milliseconds of a Prometheus duration (prometheus/common model.ParseDuration units). */
function durationMs(d: string): number {
  const unit: Record<string, number> = { y: 365 * 86_400_000, w: 7 * 86_400_000, d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
  let total = 0;
  for (const m of d.matchAll(/([0-9]+)(ms|[ywdhms])/g)) total += Number(m[1]) * unit[m[2]];
  return total;
}

function onlyFields(o: Obj, allowed: readonly string[], at: string): void {
  for (const k of Object.keys(o)) {
    if (!allowed.includes(k))
      throw new Error(
        `${at}.${k}: not supported by scrapeConfigs (test/support/podmonitor-scrape.ts); reproduce it there from promcfg.go or leave it out`,
      );
  }
}

function object(v: unknown, at: string): Obj {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error(`${at}: expected an object, got ${JSON.stringify(v)}`);
  return v as Obj;
}

function array(v: unknown, at: string): any[] {
  if (!Array.isArray(v)) throw new Error(`${at}: expected a list, got ${JSON.stringify(v)}`);
  return v;
}

function str(v: unknown, at: string): string {
  if (typeof v !== 'string') throw new Error(`${at}: expected a string, got ${JSON.stringify(v)}`);
  return v;
}

function strings(v: unknown, at: string): string[] {
  return array(v, at).map((s, i) => str(s, `${at}[${i}]`));
}

function bool(v: unknown, at: string): boolean {
  if (typeof v !== 'boolean') throw new Error(`${at}: expected true or false, got ${JSON.stringify(v)}`);
  return v;
}

/** A label key as metav1 validates it: an optional DNS-subdomain prefix and `/`, then a name of at most 63 characters. */
function labelKey(k: string, at: string): void {
  const slash = k.lastIndexOf('/');
  const prefix = slash >= 0 ? k.slice(0, slash) : undefined;
  const name = slash >= 0 ? k.slice(slash + 1) : k;
  const okName = name.length <= 63 && /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/.test(name);
  const okPrefix =
    prefix === undefined || (prefix.length <= 253 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(prefix));
  if (!okName || !okPrefix) throw new Error(`${at}: ${JSON.stringify(k)} is not a valid label key`);
}

function labelValue(v: string, at: string): void {
  if (v.length > 63 || !/^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/.test(v))
    throw new Error(`${at}: ${JSON.stringify(v)} is not a valid label value`);
}
