/**
 * What the publishing Job makes of the files of PingCAP's `tidb-monitor-initializer` image (every rule
 * file and dashboard of one TiDB release, flat): a PrometheusRule and one ConfigMap per dashboard for
 * Grafana's sidecar, for one cluster. Pure: files in, objects out. The facts about the files (the
 * `alert.rules` group of every rule file, `ENV_LABELS_ENV`, the `tidb-cluster` datasource, the
 * `tidb_cluster` and `k8s_cluster` variables) are from pingcap/monitoring's `monitor-snapshot/`.
 */
import { createHash } from 'node:crypto';
import { parse } from 'yaml';
import { injectMatcher } from '../base/promql';
import { BACKUP_LABEL, GRAFANA_DASHBOARD_LABEL, LABEL, LABEL_VALUE, names, type ComponentKind } from '../tidbcluster/names';
import type { MonitoringPublishInfo } from '../tidbcluster/contract';

/** A file of the image: its name and text. */
export interface AssetFile {
  readonly name: string;
  readonly text: string;
}

/** The Job that owns what is published. */
export interface Owner {
  readonly name: string;
  readonly uid: string;
}

/** Where each rule file and dashboard belongs: a component, 'all', or undefined for one not published. */
const RULE_FILES: Readonly<Record<string, ComponentKind>> = {
  'pd.rules.yml': 'pd',
  'tikv.rules.yml': 'tikv',
  'tikv.accelerate.rules.yml': 'tikv',
  'tidb.rules.yml': 'tidb',
  'tiflash.rules.yml': 'tiflash',
  'ticdc.rules.yml': 'ticdc',
  'tiproxy.rules.yml': 'tiproxy',
  'binlog.rules.yml': 'pump',
};
const DASHBOARDS: Readonly<Record<string, ComponentKind | 'all'>> = {
  'overview.json': 'all',
  'performance_overview.json': 'tidb',
  'pd.json': 'pd',
  'tidb.json': 'tidb',
  'tidb_runtime.json': 'tidb',
  'tidb_resource_control.json': 'tidb',
  'tikv_summary.json': 'tikv',
  'tikv_details.json': 'tikv',
  'tikv_trouble_shooting.json': 'tikv',
  'tiflash_summary.json': 'tiflash',
  'tiflash_proxy_summary.json': 'tiflash',
  'tiflash_proxy_details.json': 'tiflash',
  'ticdc.json': 'ticdc',
  'TiCDC-Monitor-Summary.json': 'ticdc',
  'ticdc_new_arch.json': 'ticdc',
  'tiproxy_summary.json': 'tiproxy',
  'binlog.json': 'pump',
};

/** The field manager of everything the Job applies. */
export const PUBLISH_FIELD_MANAGER = 'tidb-gitops-monitoring';
/** The annotation naming the image what is published came from. */
export const SOURCE_ANNOTATION = 'tidb-gitops.io/source';
/** The label of the cluster (`tidb_cluster`) that every published rule and dashboard is scoped to. */
export const CLUSTER_LABEL = 'tidb_cluster';
/** Largest dashboard JSON in one ConfigMap; the API server takes at most 1 MiB of data per ConfigMap. */
export const MAX_DASHBOARD_BYTES = 1_000_000;

/** What is published and what is left out, with why. */
export interface Published {
  readonly rules?: Record<string, unknown>;
  readonly dashboards: Record<string, unknown>[];
  /** `file: reason` for each file left out. */
  readonly skipped: string[];
}

const wanted = (info: MonitoringPublishInfo, c: ComponentKind | 'all' | undefined): boolean =>
  c === 'all' ||
  (c !== undefined &&
    (info.components.includes(c) || (c === 'pd' && (info.components.includes('tso') || info.components.includes('scheduling')))));

function metadata(info: MonitoringPublishInfo, namespace: string, name: string, owner: Owner, extra: Record<string, string> = {}) {
  return {
    name,
    namespace,
    labels: {
      ...info.labels,
      ...extra,
      [LABEL.name]: LABEL_VALUE.name,
      [LABEL.managedBy]: BACKUP_LABEL.managedBy,
      [LABEL.instance]: info.cluster,
      [LABEL.component]: 'monitoring',
    },
    annotations: { [SOURCE_ANNOTATION]: info.image },
    ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: owner.name, uid: owner.uid, blockOwnerDeletion: false }],
  };
}

/** Everything to publish for the cluster `info.cluster` in `namespace`, from the image's files. */
export function publish(files: readonly AssetFile[], info: MonitoringPublishInfo, namespace: string, owner: Owner): Published {
  const scope = `${namespace}-${info.cluster}`;
  const skipped: string[] = [];
  const groups: Record<string, unknown>[] = [];
  const dashboards: Record<string, unknown>[] = [];
  for (const f of [...files].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (f.name.endsWith('.rules.yml')) {
      if (!info.rules) continue;
      const c = RULE_FILES[f.name];
      if (!wanted(info, c)) {
        skipped.push(`${f.name}: ${c ? `the cluster runs no ${c}` : 'not a rule file of a component tidb-gitops renders'}`);
        continue;
      }
      groups.push(...ruleGroups(f, scope));
    } else if (f.name.endsWith('.json')) {
      if (!info.dashboards) continue;
      const c = DASHBOARDS[f.name];
      if (!wanted(info, c)) {
        skipped.push(`${f.name}: ${c ? `the cluster runs no ${c}` : 'not a dashboard of a component tidb-gitops renders'}`);
        continue;
      }
      dashboards.push(...dashboardConfigMaps(f, info, namespace, owner));
    }
  }
  const rules = info.rules
    ? {
        apiVersion: 'monitoring.coreos.com/v1',
        kind: 'PrometheusRule',
        metadata: metadata(info, namespace, names.alertRules(info.cluster), owner),
        spec: { groups },
      }
    : undefined;
  return { ...(rules && { rules }), dashboards, skipped };
}

const PLACEHOLDER = /ENV_LABELS_ENV/g;

/**
 * A rule file's groups, scoped to the cluster: every selector of every expression matches
 * `tidb_cluster="<namespace>-<cluster>"` (the image's rules select every cluster a Prometheus scrapes),
 * every rule carries that label, and `ENV_LABELS_ENV` names the cluster. The image puts every file's
 * alerts in one group `alert.rules`: each group takes its file's name instead.
 */
export function ruleGroups(file: AssetFile, scope: string): Record<string, unknown>[] {
  let doc: unknown;
  try {
    doc = parse(file.text);
  } catch (err) {
    throw new Error(`${file.name}: not YAML: ${(err as Error).message}`);
  }
  const groups = (doc as { groups?: unknown })?.groups;
  if (!Array.isArray(groups)) throw new Error(`${file.name}: no rule groups (expected a "groups:" list)`);
  const stem = file.name.replace(/\.rules\.yml$/, '');
  return groups.map((g: Record<string, unknown>, i) => {
    const rules = (Array.isArray(g.rules) ? g.rules : []).map((r: Record<string, unknown>) => {
      const where = `${file.name}: ${String(r.alert ?? r.record ?? 'rule')}`;
      if (typeof r.expr !== 'string' && typeof r.expr !== 'number') throw new Error(`${where}: no expr`);
      let expr: string;
      try {
        expr = injectMatcher(String(r.expr), CLUSTER_LABEL, scope);
      } catch (err) {
        throw new Error(`${where}: ${(err as Error).message}`);
      }
      const text = (v: unknown) => (typeof v === 'string' ? v.replace(PLACEHOLDER, scope) : v);
      const labels = Object.fromEntries(
        Object.entries((r.labels ?? {}) as Record<string, unknown>).map(([k, v]) => [k, k === 'expr' ? expr : text(v)]),
      );
      const annotations = r.annotations
        ? Object.fromEntries(Object.entries(r.annotations as Record<string, unknown>).map(([k, v]) => [k, text(v)]))
        : undefined;
      return { ...r, expr, labels: { ...labels, [CLUSTER_LABEL]: scope }, ...(annotations && { annotations }) };
    });
    const name = g.name === 'alert.rules' || typeof g.name !== 'string' ? (groups.length > 1 ? `${stem}-${i + 1}` : stem) : g.name;
    return { ...g, name, rules };
  });
}

const DATASOURCE_VARIABLE = 'datasource';

/** Points every panel and variable at the `datasource` variable instead of the image's fixed datasource name. */
function retarget(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(retarget);
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (
      k === 'datasource' &&
      (typeof v === 'string' ||
        (typeof v === 'object' &&
          v !== null &&
          (v as { type?: string }).type !== 'datasource' &&
          !('uid' in v && (v as { uid?: string }).uid === '-- Grafana --')))
    ) {
      out[k] = typeof v === 'string' && v.startsWith('-- ') ? v : `\${${DATASOURCE_VARIABLE}}`;
    } else {
      out[k] = retarget(v);
    }
  }
  return out;
}

/** The cluster's variables: `tidb_cluster` fixed to the cluster, `k8s_cluster` to "" (no such label). */
function variables(list: readonly Record<string, unknown>[], scope: string): Record<string, unknown>[] {
  const constant = (name: string, value: string) => ({
    type: 'constant',
    name,
    hide: 2,
    query: value,
    current: { text: value, value },
    options: [{ text: value, value, selected: true }],
  });
  const kept = list
    .filter((v) => v.name !== DATASOURCE_VARIABLE)
    .map((v) => (v.name === CLUSTER_LABEL ? constant(CLUSTER_LABEL, scope) : v.name === 'k8s_cluster' ? constant('k8s_cluster', '') : v));
  return [
    {
      type: 'datasource',
      name: DATASOURCE_VARIABLE,
      label: 'Data source',
      query: 'prometheus',
      hide: 0,
      current: {},
      options: [],
      refresh: 1,
    },
    ...kept,
  ];
}

const slug = (name: string) =>
  name
    .replace(/\.json$/, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

/**
 * A dashboard as ConfigMaps labelled for Grafana's sidecar: its own uid and title for the cluster
 * (two clusters' dashboards never collide), the datasource chosen in Grafana, `tidb_cluster` fixed.
 * One too large for a ConfigMap (TiKV-Details is about 1.5 MB even without spaces) is split at its
 * rows into parts, each a dashboard of its own.
 */
export function dashboardConfigMaps(
  file: AssetFile,
  info: MonitoringPublishInfo,
  namespace: string,
  owner: Owner,
): Record<string, unknown>[] {
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(file.text) as Record<string, unknown>;
  } catch (err) {
    throw new Error(`${file.name}: not JSON: ${(err as Error).message}`);
  }
  const scope = `${namespace}-${info.cluster}`;
  const base = retarget(doc) as Record<string, unknown>;
  delete base.id;
  delete base.__inputs;
  delete base.__requires;
  const templating = (base.templating ?? {}) as { list?: Record<string, unknown>[] };
  base.templating = { ...templating, list: variables(templating.list ?? [], scope) };
  const title = String(doc.title ?? slug(file.name)).replace(/^Test-Cluster-/, '');
  const uidOf = (part: string) =>
    `tg${createHash('sha256')
      .update(`${namespace}/${info.cluster}/${String(doc.uid ?? file.name)}${part}`)
      .digest('hex')
      .slice(0, 22)}`;
  const tags = [...new Set([...((doc.tags as string[] | undefined) ?? []), 'tidb-gitops'])];
  const whole = { ...base, uid: uidOf(''), title: `${title} · ${namespace}/${info.cluster}`, tags };
  const parts = splitDashboard(whole);
  const stem = slug(file.name);
  return parts.map((json, i) => {
    const suffix = parts.length > 1 ? `-${i + 1}` : '';
    const part =
      parts.length > 1
        ? { ...json, uid: uidOf(suffix), title: `${title} (${i + 1} of ${parts.length}) · ${namespace}/${info.cluster}` }
        : json;
    const text = JSON.stringify(part);
    if (Buffer.byteLength(text) > MAX_DASHBOARD_BYTES)
      throw new Error(`${file.name}: a row of it is larger than a ConfigMap can hold (${Buffer.byteLength(text)} bytes)`);
    return {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: metadata(info, namespace, names.dashboard(info.cluster, `${stem}${suffix}`), owner, { [GRAFANA_DASHBOARD_LABEL]: '1' }),
      data: { [`${scope}-${stem}${suffix}.json`]: text },
    };
  });
}

/** The dashboard as it is when it fits, else split before row panels into parts that each fit. */
export function splitDashboard(dashboard: Record<string, unknown>, max = MAX_DASHBOARD_BYTES): Record<string, unknown>[] {
  if (Buffer.byteLength(JSON.stringify(dashboard)) <= max) return [dashboard];
  const panels = (dashboard.panels ?? []) as Record<string, unknown>[];
  const overhead = Buffer.byteLength(JSON.stringify({ ...dashboard, panels: [] })) + 200;
  // Rows, each a row panel with what follows it up to the next row.
  const rows: Record<string, unknown>[][] = [];
  for (const p of panels) {
    if (p.type === 'row' || rows.length === 0) rows.push([p]);
    else rows[rows.length - 1].push(p);
  }
  const parts: Record<string, unknown>[][] = [];
  let size = 0;
  for (const row of rows) {
    const bytes = row.reduce((n, p) => n + Buffer.byteLength(JSON.stringify(p)) + 1, 0);
    if (parts.length === 0 || size + bytes + overhead > max) {
      parts.push([]);
      size = 0;
    }
    parts[parts.length - 1].push(...row);
    size += bytes;
  }
  return parts.map((p) => ({ ...dashboard, panels: p }));
}
