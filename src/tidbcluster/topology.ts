/**
 * Topology labels: whether the controller copies its Nodes' topology labels onto TiKV and TiFlash
 * stores (PD `POST /pd/api/v1/store/{id}/label`) and TiDB servers (`POST :10080/labels`), as
 * tidb-operator does, which lets PD keep a region's replicas in different zones and hosts.
 *
 * Reading a Node takes a ClusterRole (a namespaced Role cannot grant it), so it is rendered only for
 * a cluster that asks for these labels in Git: PD's `replication.location-labels` in `spec.pd.config`,
 * or `spec.tikv.storeLabels`.
 */
import { isTomlTable, type TomlTable } from '../base/toml';
import type { SpecIssue } from './errors';

/** What makes a cluster read its Nodes. */
export interface ResolvedNodeAccess {
  /** PD's `replication.location-labels` as this cluster's PD config sets them. @default [] (not set in Git) */
  readonly locationLabels: readonly string[];
  /** What in the spec asks for node labels, in words for the `diff` report and errors. */
  readonly because: string;
}

/**
 * PD's label key format (tikv/pd `pkg/schedule/config/util.go` keyFormat): letters and digits, with
 * `-`, `_`, `.` and `/` inside, and an optional leading `$`. PD refuses other keys, in its config
 * (location-labels) and in `POST /store/{id}/label` alike.
 */
export const PD_LABEL_KEY = /^[$]?[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?$/;
/** PD's label value format (same file, valueFormat); an empty value deletes the label. */
export const PD_LABEL_VALUE = /^[-A-Za-z0-9_./]*$/;

const KEY_WORDS = "a PD label key (letters and digits, with '-', '_', '.' or '/' inside)";

/**
 * `replication.location-labels` of a PD config table: a TOML array of strings, or (as PD's JSON config
 * API writes it, typeutil.StringSlice) one comma-separated string.
 */
export function locationLabelsOf(config: TomlTable, path: string, issues: SpecIssue[]): string[] {
  const replication = config.replication;
  if (!isTomlTable(replication)) return [];
  const raw = replication['location-labels'];
  const at = `${path}.replication.location-labels`;
  if (raw === undefined) return [];
  const list = typeof raw === 'string' ? (raw === '' ? [] : raw.split(',')) : Array.isArray(raw) ? raw : undefined;
  if (list === undefined || list.some((k) => typeof k !== 'string')) {
    issues.push({ path: at, message: 'expected a list of label keys, such as ["zone", "host"]' });
    return [];
  }
  const keys = list as string[];
  keys.forEach((k, i) => {
    if (!PD_LABEL_KEY.test(k))
      issues.push({ path: typeof raw === 'string' ? at : `${at}[${i}]`, message: `expected ${KEY_WORDS}, got ${JSON.stringify(k)}` });
  });
  return keys;
}

/** Checks `spec.tikv.storeLabels`: Node label keys that PD must accept as store label keys. */
export function checkStoreLabelKeys(keys: readonly string[], issues: SpecIssue[]): void {
  keys.forEach((k, i) => {
    if (!PD_LABEL_KEY.test(k))
      issues.push({
        path: `spec.tikv.storeLabels[${i}]`,
        message: `expected a Node label key that is also ${KEY_WORDS}, got ${JSON.stringify(k)}`,
      });
  });
}

/**
 * Whether, and why, the cluster reads its Nodes. A ClusterRoleBinding must name its ServiceAccount's
 * namespace, so such a cluster needs one at render time.
 */
export function resolveNodeAccess(
  o: { readonly pdConfig?: TomlTable; readonly storeLabels?: readonly string[]; readonly namespace?: string },
  issues: SpecIssue[],
): ResolvedNodeAccess | undefined {
  const locationLabels = o.pdConfig ? locationLabelsOf(o.pdConfig, 'spec.pd.config', issues) : [];
  const storeLabels = o.storeLabels ?? [];
  const reasons = [
    locationLabels.length > 0 && `spec.pd.config replication.location-labels (${locationLabels.join(', ')})`,
    storeLabels.length > 0 && `spec.tikv.storeLabels (${storeLabels.join(', ')})`,
  ].filter((r): r is string => typeof r === 'string');
  if (reasons.length === 0) return undefined;
  if (o.namespace === undefined) {
    issues.push({
      path: 'metadata.namespace',
      message: `required with ${reasons.join(' and ')}: the controller reads Nodes through a ClusterRoleBinding, which must name its ServiceAccount's namespace; set it here or pass --namespace`,
    });
  }
  return { locationLabels, because: reasons.join(' and ') };
}
